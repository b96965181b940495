package datasets

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib/fsext"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// The images a prompt dataset attaches: read from image files, handed to the
// script with each drawn item, and put back into a chat body in the
// protocol's shape.

// imageExtensions are the files images.dir takes, by name.
var imageExtensions = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true} //nolint:gochecknoglobals // read-only table

// readImages fills o.Files from images.dir (its image files, by name) and
// images.files, in that order.
func readImages(vu modules.VU, o *dataset.ImageOptions, what string) error {
	var paths []string
	if o.Dir != "" {
		env := vu.InitEnv()
		if env == nil {
			return errors.New(what + ": images.dir is read in the init context only")
		}
		fs, ok := env.FileSystems["file"]
		if !ok {
			return errors.New(what + ": no file system in this k6 context")
		}
		dir := fsext.Abs(env.CWD.Path, strings.TrimPrefix(o.Dir, "file://"))
		entries, err := fsext.ReadDir(fs, dir)
		if err != nil {
			return fmt.Errorf("%s: images.dir: %w", what, err)
		}
		var names []string
		for _, e := range entries {
			if !e.IsDir() && imageExtensions[strings.ToLower(path.Ext(e.Name()))] {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			paths = append(paths, path.Join(strings.TrimPrefix(o.Dir, "file://"), n))
		}
	}
	paths = append(paths, o.Paths...)
	if len(paths) == 0 {
		return nil
	}
	files, err := readFiles(vu, paths, what+": images")
	if err != nil {
		return err
	}
	o.Files = files
	return nil
}

// imageList is the images of a drawn item as JS objects; data is the
// base64 payload (a Go string: JavaScript copies it only if it reads it).
func imageList(imgs []dataset.Image) []any {
	out := make([]any, len(imgs))
	for i, im := range imgs {
		out[i] = map[string]any{
			"mime": im.MIME, "width": int64(im.Width), "height": int64(im.Height), "bytes": int64(im.Bytes),
			"file": im.File, "data": im.Base64,
		}
	}
	return out
}

// attachItemImages puts a dataset item's images into a chat body, in the
// protocol's shape. The item is the one a script passed back ({item}): its
// images are the Go values imageList made, so the payload is not copied
// through JavaScript.
func AttachItemImages(protocolName string, body, item map[string]any) error {
	list, _ := item["images"].([]any)
	if len(list) == 0 {
		return nil
	}
	imgs := make([]protocol.Image, 0, len(list))
	for i, v := range list {
		m, _ := v.(map[string]any)
		mime, _ := m["mime"].(string)
		data, _ := m["data"].(string)
		if mime == "" || data == "" {
			return fmt.Errorf("item.images[%d] has no mime or data (an image object of a dataset item)", i)
		}
		imgs = append(imgs, protocol.Image{MIME: mime, Base64: data})
	}
	return protocol.AttachImages(protocolName, body, imgs) //nolint:wrapcheck // names the field
}
