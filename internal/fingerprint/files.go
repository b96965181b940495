package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
)

// Files digests every regular file of fsys, the files the test read (k6
// keeps each file it reads, the script and its modules included, in a
// cache layer: what `k6 archive` packs), keyed by its path relative to base,
// the script's directory, so that instances that keep the same test in
// different directories agree. skip leaves a file out (by its path in fsys):
// a file that is no part of the test, such as a baseline record.
func Files(fsys fs.FS, base string, skip func(name string) bool) (map[string]string, error) {
	out := map[string]string{}
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || (skip != nil && skip(name)) {
			return nil
		}
		sum, err := fileDigest(fsys, name)
		if err != nil {
			return err
		}
		out[relative(base, name)] = sum
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fingerprint: the test's files: %w", err)
	}
	return out, nil
}

// stdinScript is where k6 keeps a script read from standard input.
const stdinScript = "-"

func fileDigest(fsys fs.FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err //nolint:wrapcheck // WalkDir's caller names the walk
	}
	defer f.Close() //nolint:errcheck // read only
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// relative is name (a slash path of fsys, no leading slash) relative to
// base ("" or "." for the root): "lib/a.js", or "../data/p.json" above it.
// A script read from standard input is kept as "-" (k6 keeps it at the
// root, and base is then the directory k6 was started in, which is each
// instance's own).
func relative(base, name string) string {
	if name == stdinScript {
		return name
	}
	base = strings.Trim(path.Clean("/"+base), "/")
	if base == "" {
		return name
	}
	b, n := strings.Split(base, "/"), strings.Split(name, "/")
	i := 0
	for i < len(b) && i < len(n)-1 && b[i] == n[i] {
		i++
	}
	return strings.Repeat("../", len(b)-i) + strings.Join(n[i:], "/")
}
