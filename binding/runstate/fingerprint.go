package runstate

import (
	"encoding/json"
	"io/fs"
	"path"
	"strings"
	"sync"

	"go.k6.io/k6/js/common"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/fsext"

	"github.com/llmstream/xk6-llmstream/internal/fingerprint"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// fingerprintState gathers, once per process, what the run's fingerprint is
// made of (internal/fingerprint): k6's file systems as the init context left
// them, the Clients' digests, and k6's options. The digests of the files are
// taken when the record is written, after the test: every file the init
// context read is in k6's cache layer by then, and hashing them costs no
// measured call anything.
type fingerprintState struct {
	mu      sync.Mutex
	files   fsext.Fs // what the test read through k6's "file" file system
	remote  fsext.Fs // remote modules ("https")
	base    string   // the script's directory in files
	skip    map[string]bool
	clients map[fingerprint.Client]bool
	options json.RawMessage // k6's scenarios and thresholds
}

// NoteFileSystems keeps k6's file systems of the init context, once per
// process: for a script, the cache layer of what it read (what `k6 archive`
// packs); for an archive, the archive's own files.
func (s *RunInfoState) NoteFileSystems(env *common.InitEnvironment) {
	f := &s.fp
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.files != nil || env == nil {
		return
	}
	files := env.FileSystems["file"]
	if c, ok := files.(fsext.CacheLayerGetter); ok {
		files = c.GetCachingFs()
	}
	f.files, f.remote = files, env.FileSystems["https"]
	if env.CWD != nil {
		f.base = strings.Trim(env.CWD.Path, "/")
	}
}

// SkipFile leaves a file the init context read out of the fingerprint (abs
// as k6's file system names it): a baseline record is no part of the test.
func (s *RunInfoState) SkipFile(abs string) {
	f := &s.fp
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.skip == nil {
		f.skip = map[string]bool{}
	}
	f.skip[strings.TrimPrefix(path.Clean("/"+abs), "/")] = true
}

// noteClient keeps a Client's digest under its label (the label its calls
// carry; fallback is its fallback Client's). A Client whose options cannot
// be digested is left out: the fingerprint then cannot tell it apart.
func (f *fingerprintState) noteClient(c fingerprint.Client) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clients == nil {
		f.clients = map[fingerprint.Client]bool{}
	}
	f.clients[c] = true
}

// noteOptions keeps k6's options that shape the test, from a VU's state.
func (f *fingerprintState) noteOptions(o lib.Options) {
	b, err := json.Marshal(map[string]any{"scenarios": o.Scenarios, "thresholds": o.Thresholds})
	if err != nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.options = b
}

// fingerprint is the run's fingerprint; nil when it cannot be made (then
// the record has none, and a merge warns as for an older record).
func (s *RunInfoState) fingerprint(datasets []runrecord.DatasetInfo, sequence string) *runrecord.Fingerprint {
	f := &s.fp
	f.mu.Lock()
	in := fingerprint.Inputs{Datasets: datasets, SegmentSequence: sequence}
	if f.options != nil {
		in.K6Options = f.options
	}
	for c := range f.clients {
		in.Clients = append(in.Clients, c)
	}
	files, remote, base := f.files, f.remote, f.base
	skip := func(name string) bool { return f.skip[name] }
	f.mu.Unlock()
	if files != nil {
		in.Files = map[string]string{}
		local, err := fingerprint.Files(aferoFS{files}, base, skip)
		if err != nil {
			in.Files = nil // unreadable: not compared
		}
		for k, v := range local {
			in.Files[k] = v
		}
		if remote != nil && in.Files != nil {
			mods, err := fingerprint.Files(aferoFS{remote}, "", nil)
			if err != nil {
				in.Files = nil
			}
			for k, v := range mods {
				in.Files["https://"+k] = v
			}
		}
	}
	fp, err := fingerprint.Of(in)
	if err != nil {
		return nil
	}
	return fp
}

// aferoFS reads k6's file system (an afero.Fs, whose paths start at "/") as
// an io/fs file system. k6's afero predates afero's own adapter.
type aferoFS struct{ fs fsext.Fs }

func (a aferoFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	return a.fs.Open(rooted(name)) //nolint:wrapcheck // afero's error names the path
}

func (a aferoFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	infos, err := fsext.ReadDir(a.fs, rooted(name))
	if err != nil {
		return nil, err //nolint:wrapcheck // afero's error names the path
	}
	out := make([]fs.DirEntry, len(infos))
	for i, fi := range infos {
		out[i] = fs.FileInfoToDirEntry(dirInfo{fi})
	}
	return out, nil
}

func (a aferoFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	fi, err := a.fs.Stat(rooted(name))
	if err != nil {
		return nil, err //nolint:wrapcheck // afero's error names the path
	}
	return dirInfo{fi}, nil
}

// dirInfo mends the mode of afero's in-memory folders, which say IsDir
// without ModeDir, so that a walk goes into them instead of reading them.
type dirInfo struct{ fs.FileInfo }

func (d dirInfo) Mode() fs.FileMode {
	if d.IsDir() {
		return d.FileInfo.Mode() | fs.ModeDir
	}
	return d.FileInfo.Mode()
}

// rooted is an io/fs name as afero names it: "." is "/", "a/b" "/a/b".
func rooted(name string) string {
	if name == "." {
		return "/"
	}
	return "/" + name
}
