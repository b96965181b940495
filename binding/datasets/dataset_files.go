package datasets

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib/fsext"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

// The files a dataset reads: through k6's init file system, so `k6 archive`
// carries them, and in the init context only, once per process.

// readTexts reads text files through k6's init file system (so `k6
// archive` carries them) and digests them for the run record.
func readTexts(vu modules.VU, paths []string, what string) ([]dataset.SourceText, string, error) {
	files, err := readFiles(vu, paths, what)
	if err != nil {
		return nil, "", err
	}
	h := sha256.New()
	out := make([]dataset.SourceText, len(files))
	for i, f := range files {
		_, _ = h.Write(f.Data)
		out[i] = dataset.SourceText{Name: f.Name, Text: string(f.Data)}
	}
	return out, fmt.Sprintf("%x", h.Sum(nil)), nil
}

// readFiles reads files through k6's init file system, by the paths a script
// gave (relative to the script's folder).
func readFiles(vu modules.VU, paths []string, what string) ([]dataset.ImageFile, error) {
	env := vu.InitEnv()
	if env == nil {
		return nil, errors.New(what + ": files are read in the init context only (outside the default function)")
	}
	fs, ok := env.FileSystems["file"]
	if !ok {
		return nil, errors.New(what + ": no file system in this k6 context")
	}
	out := make([]dataset.ImageFile, 0, len(paths))
	for _, p := range paths {
		abs := fsext.Abs(env.CWD.Path, strings.TrimPrefix(p, "file://"))
		data, err := fsext.ReadFile(fs, abs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, dataset.ImageFile{Name: p, Data: data})
	}
	return out, nil
}
