package llmstream

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/grafana/sobek"
	"go.k6.io/k6/lib/fsext"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// The JS faces of the retrieval datasets (document chunks for embed, query
// sets for rerank) and of the image files a prompt dataset attaches. Like
// the prompt sets, each is built once per process and shared by its VUs.

// chunks is Dataset.chunks(options).
func (ds datasetFactory) chunks(opts sobek.Value) (*jsChunks, error) {
	var o dataset.ChunkOptions
	if err := decodeOptions(opts, "Dataset.chunks options", &o); err != nil {
		return nil, err
	}
	key := storeKey("chunks", o)
	c, err := dataset.Shared(ds.store, key, func() (*dataset.Chunks, error) {
		var digest string
		if len(o.Files) > 0 { // read once per process, not per VU
			texts, sum, err := ds.readTexts(o.Files, "files")
			if err != nil {
				return nil, err
			}
			o.Texts, digest = texts, sum
		}
		c, err := dataset.NewChunks(o)
		if err == nil {
			ds.info.registerDataset(key, "chunks", opts, c.Size(), digest)
		}
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("Dataset.chunks: %w", err)
	}
	return &jsChunks{c: c}, nil
}

// rerank is Dataset.rerank(options).
func (ds datasetFactory) rerank(opts sobek.Value) (*jsRerankSet, error) {
	var o dataset.RerankOptions
	if err := decodeOptions(opts, "Dataset.rerank options", &o); err != nil {
		return nil, err
	}
	key := storeKey("rerank", o)
	s, err := dataset.Shared(ds.store, key, func() (*dataset.RerankSet, error) {
		s, err := dataset.NewRerankSet(o)
		if err == nil {
			ds.info.registerDataset(key, "rerank", opts, s.Size(), "")
		}
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("Dataset.rerank: %w", err)
	}
	return &jsRerankSet{s: s}, nil
}

// readTexts reads text files through k6's init file system (so `k6
// archive` carries them) and digests them for the run record.
func (ds datasetFactory) readTexts(paths []string, what string) ([]dataset.SourceText, string, error) {
	files, err := ds.readFiles(paths, what)
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

func (ds datasetFactory) readFiles(paths []string, what string) ([]dataset.ImageFile, error) {
	env := ds.vu.InitEnv()
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

// imageExtensions are the files images.dir takes, by name.
var imageExtensions = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true} //nolint:gochecknoglobals // read-only table

// readImages fills o.Files from images.dir (its image files, by name) and
// images.files, in that order.
func (ds datasetFactory) readImages(o *dataset.ImageOptions, what string) error {
	var paths []string
	if o.Dir != "" {
		env := ds.vu.InitEnv()
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
	files, err := ds.readFiles(paths, what+": images")
	if err != nil {
		return err
	}
	o.Files = files
	return nil
}

// jsChunks is what scripts hold of Dataset.chunks: next(), draw(n), size(),
// info(). A batch is a fresh object: {inputs, tokens, totalTokens, category}.
type jsChunks struct{ c *dataset.Chunks }

// Next returns the process's next batch.
func (j *jsChunks) Next() map[string]any { return batchObject(j.c.Next()) }

// Draw returns batch n without advancing.
func (j *jsChunks) Draw(v sobek.Value) (map[string]any, error) {
	n, err := indexArg(v, "draw(n): n")
	if err != nil {
		return nil, err
	}
	return batchObject(j.c.Draw(uint64(n))), nil // #nosec G115 -- indexArg refuses negative numbers
}

// Size is the number of distinct chunks.
func (j *jsChunks) Size() int { return j.c.Size() }

// Info describes the chunks: how many, their tokenizer, the batch mix.
func (j *jsChunks) Info() map[string]any {
	mix := map[string]any{}
	for n, share := range j.c.BatchSizes() {
		mix[fmt.Sprint(n)] = share
	}
	return map[string]any{"chunks": j.c.Size(), "tokenizer": j.c.Tokenizer(), "batchShares": mix, "draws": j.c.Draws()}
}

func batchObject(b dataset.Batch) map[string]any {
	inputs := make([]any, len(b.Inputs))
	tokens := make([]any, len(b.Tokens))
	for i := range b.Inputs {
		inputs[i], tokens[i] = b.Inputs[i], int64(b.Tokens[i])
	}
	return map[string]any{"inputs": inputs, "tokens": tokens, "totalTokens": int64(b.TotalTokens()), "category": b.Category}
}

// jsRerankSet is what scripts hold of Dataset.rerank: next(), draw(n),
// size(). A query is a fresh object: {id, query, documents, topN, …}.
type jsRerankSet struct{ s *dataset.RerankSet }

// Next returns the process's next query.
func (j *jsRerankSet) Next() map[string]any { return queryObject(j.s.Next()) }

// Draw returns query n (modulo size) without advancing.
func (j *jsRerankSet) Draw(v sobek.Value) (map[string]any, error) {
	n, err := indexArg(v, "draw(n): n")
	if err != nil {
		return nil, err
	}
	return queryObject(j.s.Draw(uint64(n))), nil // #nosec G115 -- indexArg refuses negative numbers
}

// Size is the number of distinct queries.
func (j *jsRerankSet) Size() int { return j.s.Size() }

func queryObject(q dataset.RerankQuery) map[string]any {
	docs := make([]any, len(q.Documents))
	tokens := make([]any, len(q.Documents))
	for i := range q.Documents {
		docs[i], tokens[i] = q.Documents[i], int64(q.DocumentTokens[i])
	}
	return map[string]any{
		"id": q.ID, "query": q.Query, "queryTokens": int64(q.QueryTokens), "documents": docs,
		"documentTokens": tokens, "topN": int64(q.TopN), "category": q.Category,
	}
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
func attachItemImages(protocolName string, body, item map[string]any) error {
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
