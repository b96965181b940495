package datasets

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib/fsext"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/binding/runstate"
	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

// Dataset: the JS surface of internal/dataset's prompt sets. Everything built
// here lives once per process in the root module's store, keyed by source and
// options, so 1000 VUs that load one file hold one copy of it.

// datasetFactory is one VU's Dataset namespace: builds are kept once per process in
// the store, and described in the run record.
type DatasetFactory struct {
	VU    modules.VU
	Store *dataset.Store
	Scope k6env.VUScope
	Info  *runstate.RunInfoState
}

// ---- the shared store ----

// ---- Dataset ----

// synthetic is Dataset.synthetic(options).
func (ds DatasetFactory) Synthetic(opts sobek.Value) (*JSDataset, error) {
	var o dataset.SyntheticOptions
	if err := k6env.DecodeOptions(opts, "Dataset.synthetic options", &o); err != nil {
		return nil, err
	}
	key := k6env.StoreKey("synthetic", o)
	d, err := dataset.Shared(ds.Store, key, func() (*dataset.Dataset, error) {
		if err := readImages(ds.VU, &o.Images, "images"); err != nil { // once per process, not per VU
			return nil, err
		}
		d, err := dataset.Synthetic(o)
		if err == nil {
			ds.Info.RegisterDataset(key, "synthetic", opts, d.Size(), "")
		}
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("Dataset.synthetic: %w", err)
	}
	return &JSDataset{d: d, scope: ds.Scope}, nil
}

// load is Dataset.load(path, options). It reads through k6's init
// file system, so `k6 archive` and cloud runs carry the file.
func (ds DatasetFactory) Load(path string, opts sobek.Value) (*JSDataset, error) {
	env := ds.VU.InitEnv()
	if env == nil {
		return nil, errors.New("Dataset.load must be called in the init context (outside the default function)")
	}
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("Dataset.load: a file path is required")
	}
	var o dataset.LoadOptions
	if err := k6env.DecodeOptions(opts, "Dataset.load options", &o); err != nil {
		return nil, err
	}
	fs, ok := env.FileSystems["file"]
	if !ok {
		return nil, errors.New("Dataset.load: no file system in this k6 context")
	}
	abs := fsext.Abs(env.CWD.Path, strings.TrimPrefix(path, "file://"))
	key := k6env.StoreKey("load", abs, o)
	d, err := dataset.Shared(ds.Store, key, func() (*dataset.Dataset, error) {
		data, err := fsext.ReadFile(fs, abs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if err := readImages(ds.VU, &o.Images, "images"); err != nil {
			return nil, err
		}
		d, err := dataset.Load(data, path, o)
		if err == nil && len(d.Info().Scrubbed) > 0 && env.Logger != nil {
			env.Logger.Infof("llmstream: %s: scrubbing masked %v", path, d.Info().Scrubbed)
		}
		if err == nil {
			ds.Info.RegisterDataset(key, path, opts, d.Size(), fmt.Sprintf("%x", sha256.Sum256(data)))
		}
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("Dataset.load: %w", err)
	}
	return &JSDataset{d: d, scope: ds.Scope}, nil
}

// jsDataset is what scripts hold. Its methods become next(), draw(), at(),
// size(), categories() and info(); items are fresh plain objects, so a script
// that edits one cannot change what other VUs get.
//
// next() and draw() draw from this instance's part of the dataset when the
// test is split across k6 instances: known from the first call in a VU (k6
// has not read its options yet while init code runs, where the whole dataset
// is drawn). In an iteration, next() takes the whole test's draw of the
// iteration instead (dataset_next.go).
type JSDataset struct {
	d     *dataset.Dataset
	scope k6env.VUScope
	part  *dataset.Part  // nil until the execution segment is known
	iter  iterationDraws // this VU's draws in its current iteration
}

func (j *JSDataset) sequence() (*dataset.Part, error) {
	return k6env.InstancePart(j.scope, &j.part, func() *dataset.Part { return j.d.Part(dataset.Share{}) },
		func(share dataset.Share) *dataset.Part { return j.d.Part(share) })
}

// striped is this instance's part for draws that follow its own stripe
// (draw(n), and next() outside an iteration), with a warning for the
// categories too small to split.
func (j *JSDataset) striped() (*dataset.Part, error) {
	p, err := j.sequence()
	if err == nil {
		if u := p.Unsplit(); len(u) > 0 {
			j.scope.WarnOnce("unsplit:"+j.d.Name(), "llmstream: %s: categories %v have too few items to split across "+
				"instances: every instance draws all of them", j.d.Name(), u)
		}
	}
	return p, err
}

// Next returns the next item: the process-wide sequence's next draw, or, in
// an iteration of a test split across instances, the whole test's draw of
// that iteration (see dataset_next.go).
func (j *JSDataset) Next() (map[string]any, error) {
	p, err := j.sequence()
	if err != nil {
		return nil, fmt.Errorf("next(): %w", err)
	}
	if !p.Share().Full() {
		if g, ok := j.inTest(); ok {
			return itemObject(p.Take(g)), nil
		}
	}
	if p, err = j.striped(); err != nil {
		return nil, fmt.Errorf("next(): %w", err)
	}
	return itemObject(p.Next()), nil
}

// Draw returns this instance's draw n (reproducible: key it on
// exec.scenario.iterationInInstance).
func (j *JSDataset) Draw(v sobek.Value) (map[string]any, error) {
	n, err := indexArg(v, "draw(n): n")
	if err != nil {
		return nil, err
	}
	p, err := j.striped()
	if err != nil {
		return nil, fmt.Errorf("draw(%d): %w", n, err)
	}
	return itemObject(p.Draw(uint64(n))), nil // #nosec G115 -- indexArg refuses negative numbers
}

// DrawInTest returns the whole test's draw n, whatever this instance's
// share: keyed on an index that is unique across instances
// (exec.scenario.iterationInTest, a schedule credit's seq), the instances
// together draw exactly what one instance would, item for item, whatever
// the executor and however k6 split the VUs and iterations.
func (j *JSDataset) DrawInTest(v sobek.Value) (map[string]any, error) {
	n, err := indexArg(v, "drawInTest(n): n")
	if err != nil {
		return nil, err
	}
	return itemObject(j.d.Part(dataset.Share{}).Draw(uint64(n))), nil // #nosec G115 -- indexArg refuses negative numbers
}

// At returns item i (modulo size).
func (j *JSDataset) At(v sobek.Value) (map[string]any, error) {
	i, err := indexArg(v, "at(i): i")
	if err != nil {
		return nil, err
	}
	it, err := j.d.At(int(i))
	if err != nil {
		return nil, fmt.Errorf("at(%d): %w", i, err)
	}
	return itemObject(it), nil
}

// indexArg reads a draw or item number. JS would turn undefined (a misspelt
// exec field), a string or 1.5 into some number silently: every call would
// then send the same item.
func indexArg(v sobek.Value, what string) (int64, error) {
	if common.IsNullish(v) {
		return 0, fmt.Errorf("%s must be a whole number (e.g. exec.scenario.iterationInInstance), got %v", what, v)
	}
	var n int64
	if f, ok := v.Export().(float64); ok && f == float64(int64(f)) {
		n = int64(f)
	} else if i, ok := v.Export().(int64); ok {
		n = i
	} else {
		return 0, fmt.Errorf("%s must be a whole number, not negative, got %s", what, k6env.DescribeJS(v))
	}
	if n < 0 {
		return 0, fmt.Errorf("%s must be a whole number, not negative, got %d", what, n)
	}
	return n, nil
}

// Size is the number of distinct items.
func (j *JSDataset) Size() int { return j.d.Size() }

// Categories lists the categories drawn.
func (j *JSDataset) Categories() []string { return j.d.Categories() }

// Info describes the dataset: items per category, token ranges, what was
// skipped or masked.
func (j *JSDataset) Info() map[string]any {
	in := j.d.Info()
	cats := make([]any, len(in.Categories))
	for i, c := range in.Categories {
		cats[i] = map[string]any{
			"name": c.Name, "items": c.Items, "weight": c.Weight, "share": c.Share,
			"minPromptTokens": c.MinPromptTokens, "maxPromptTokens": c.MaxPromptTokens,
			"meanPromptTokens": c.MeanPrompt, "minMaxTokens": c.MinMaxTokens, "maxMaxTokens": c.MaxMaxTokens,
		}
	}
	out := map[string]any{
		"name": in.Name, "tokenizer": in.Tokenizer, "items": in.Items, "categories": cats,
		"skipped": countsObject(in.Skipped), "scrubbed": countsObject(in.Scrubbed),
		"sharedPrefixItems": in.SharedPrefix, "cacheBust": in.CacheBust, "draws": j.d.Draws(),
	}
	if p, err := j.sequence(); err == nil && j.part != nil {
		// this instance's part of a split test: its draws, its items
		sh := p.Share()
		out["draws"] = p.Draws()
		out["segment"] = map[string]any{"segment": sh.Segment(), "sequence": sh.Sequence(), "fraction": sh.Fraction(),
			"items": p.Items(), "unsplit": p.Unsplit()}
	}
	return out
}

func countsObject(m map[string]int) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// itemObject builds the JS item. Explicit maps keep the names camelCase (k6's
// field mapper would snake_case struct fields); integers are int64, the type
// JS numbers export as, so an item handed back to client.chat({item}) reads
// the same whether the script passed it through or rebuilt it.
func itemObject(it dataset.Item) map[string]any {
	msgs := make([]any, len(it.Messages))
	for i, m := range it.Messages {
		msgs[i] = map[string]any{"role": m.Role, "content": m.Content}
	}
	return map[string]any{
		"id":           it.ID,
		"category":     it.Category,
		"messages":     msgs,
		"prompt":       it.Prompt(),
		"promptTokens": int64(it.PromptTokens),
		"maxTokens":    int64(it.MaxTokens),
		"turn":         int64(it.Turn),
		"conversation": it.Conversation,
		"sharedPrefix": it.SharedPrefix(),
		"prefixTokens": int64(it.PrefixTokens),
		"cacheBust":    it.CacheBust,
		"images":       imageList(it.Images),
	}
}

// datasetOf is the process-wide dataset a script's Dataset reads: every VU's
// Dataset of one source and options reads the same one.
func DatasetOf(j *JSDataset) *dataset.Dataset { return j.d }
