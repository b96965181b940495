package load

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"go.k6.io/k6/js/common"
	"go.k6.io/k6/lib/fsext"
)

// The file a trace schedule reads, resolved as k6 resolves open() (relative
// to the script's folder). Two ways to read it:
//   - through k6's init file system (the default): k6 keeps the file's whole
//     text in memory for the rest of the run, as it does for every file the
//     init context opens, so that `k6 archive` (and k6 Cloud, k6-operator
//     running an archive) carries it;
//   - fromDisk: straight from the disk, streamed: the text is parsed as it is
//     read and only the compact rows stay, but no archive carries the file:
//     it must be where the test runs.

// bigTraceFile is the size from which reading a trace through k6's file
// system says what k6's copy of it costs.
const bigTraceFile = 64 << 20

// openTrace opens the trace at path (as the script gave it) and says its
// size.
func openTrace(env *common.InitEnvironment, path string, fromDisk bool) (io.ReadCloser, int64, error) {
	name := strings.TrimPrefix(path, "file://")
	if !fromDisk {
		fs, ok := env.FileSystems["file"]
		if !ok {
			return nil, 0, errors.New("no file system in this k6 context")
		}
		return openIn(fs, fsext.Abs(env.CWD.Path, name), path, "")
	}
	if env.CWD == nil || (env.CWD.Scheme != "file" && env.CWD.Scheme != "") {
		if !strings.HasPrefix(name, "/") {
			return nil, 0, fmt.Errorf("%s: fromDisk reads from this machine's disk, and the script is not a local file "+
				"(%s): give an absolute path", path, env.CWD)
		}
	}
	root := "/"
	if env.CWD != nil {
		root = env.CWD.Path
	}
	osfs := fsext.NewOsFs()
	if runtime.GOOS == "windows" {
		// as k6's own: paths keep their leading separator ("/C:/…")
		osfs = fsext.NewTrimFilePathSeparatorFs(osfs)
	}
	return openIn(osfs, fsext.Abs(root, name), path,
		" (fromDisk reads the file from the disk where the test runs: `k6 archive`, k6 Cloud and k6-operator do not carry it)")
}

func openIn(fs fsext.Fs, abs, path, hint string) (io.ReadCloser, int64, error) {
	info, err := fs.Stat(abs)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w%s", path, err, hint)
	}
	if info.IsDir() {
		return nil, 0, fmt.Errorf("%s: %s is a folder, not a trace file", path, abs)
	}
	f, err := fs.Open(abs)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w%s", path, err, hint)
	}
	return f, info.Size(), nil
}
