package llmstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/grafana/sobek"
	"go.k6.io/k6/lib/fsext"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

// Dataset and Arrivals: the JS surface of internal/dataset. Everything built
// here lives once per process in the root module's store, keyed by source and
// options, so 1000 VUs that load one file hold one copy of it.

func (mi *ModuleInstance) datasetExports() map[string]any {
	return map[string]any{
		"Dataset":  map[string]any{"synthetic": mi.syntheticDataset, "load": mi.loadDataset},
		"Arrivals": map[string]any{"poisson": mi.poissonArrivals, "bursty": mi.burstyArrivals},
	}
}

// ---- options ----

// jsRange accepts 7, [10, 50] or {min: 10, max: 50}.
type jsRange struct{ Min, Max int }

func (r *jsRange) UnmarshalJSON(b []byte) error {
	var n int
	if json.Unmarshal(b, &n) == nil {
		r.Min, r.Max = n, n
		return nil
	}
	var pair []int
	if json.Unmarshal(b, &pair) == nil {
		if len(pair) != 2 {
			return fmt.Errorf("a range is [min, max], got %d numbers", len(pair))
		}
		r.Min, r.Max = pair[0], pair[1]
		return nil
	}
	var obj struct{ Min, Max int }
	if err := strictJSON(b, &obj); err != nil {
		return errors.New("a range is a number, [min, max] or {min, max}")
	}
	r.Min, r.Max = obj.Min, obj.Max
	return nil
}

func (r *jsRange) toRange() *dataset.Range {
	if r == nil {
		return nil
	}
	return &dataset.Range{Min: r.Min, Max: r.Max}
}

type syntheticOptions struct {
	Seed         uint64                     `json:"seed"`
	Mix          map[string]float64         `json:"mix"`
	Categories   map[string]categoryOptions `json:"categories"`
	Tokenizer    string                     `json:"tokenizer"`
	Variants     int                        `json:"variants"`
	SharedPrefix *struct {
		Count    int     `json:"count"`
		Tokens   int     `json:"tokens"`
		Fraction float64 `json:"fraction"`
	} `json:"sharedPrefix"`
	CacheBust bool     `json:"cacheBust"`
	Turns     *jsRange `json:"turns"`
}

type categoryOptions struct {
	Prompt    *jsRange `json:"prompt"`
	MaxTokens *jsRange `json:"maxTokens"`
	Weight    *float64 `json:"weight"`
	Variants  int      `json:"variants"`
	Style     string   `json:"style"`
}

func (o *syntheticOptions) toDataset() dataset.SyntheticOptions {
	out := dataset.SyntheticOptions{Seed: o.Seed, Mix: o.Mix, Tokenizer: o.Tokenizer, Variants: o.Variants,
		CacheBust: o.CacheBust}
	if len(o.Categories) > 0 {
		out.Categories = map[string]dataset.CategorySpec{}
		for name, c := range o.Categories {
			out.Categories[name] = dataset.CategorySpec{Prompt: c.Prompt.toRange(), MaxTokens: c.MaxTokens.toRange(),
				Weight: c.Weight, Variants: c.Variants, Style: c.Style}
		}
	}
	if p := o.SharedPrefix; p != nil {
		out.SharedPrefix = dataset.SharedPrefixOptions{Count: p.Count, Tokens: p.Tokens, Fraction: p.Fraction}
	}
	if o.Turns != nil {
		out.Turns = dataset.Range{Min: o.Turns.Min, Max: o.Turns.Max}
	}
	return out
}

type loadOptions struct {
	Format          string             `json:"format"`
	Tokenizer       string             `json:"tokenizer"`
	Scrub           bool               `json:"scrub"`
	Buckets         []bucketOptions    `json:"buckets"`
	Mix             map[string]float64 `json:"mix"`
	MinPromptTokens int                `json:"minPromptTokens"`
	MaxPromptTokens int                `json:"maxPromptTokens"`
	Turns           string             `json:"turns"`
	Limit           int                `json:"limit"`
	Shuffle         bool               `json:"shuffle"`
	Seed            uint64             `json:"seed"`
	CacheBust       bool               `json:"cacheBust"`
}

type bucketOptions struct {
	Name            string   `json:"name"`
	Prompt          *jsRange `json:"prompt"`
	MinOutputTokens int      `json:"minOutputTokens"`
	MaxTokens       int      `json:"maxTokens"`
}

func (o *loadOptions) toDataset() dataset.LoadOptions {
	out := dataset.LoadOptions{Format: o.Format, Tokenizer: o.Tokenizer, Scrub: o.Scrub, Mix: o.Mix,
		MinPromptTokens: o.MinPromptTokens, MaxPromptTokens: o.MaxPromptTokens, Turns: o.Turns, Limit: o.Limit,
		Shuffle: o.Shuffle, Seed: o.Seed, CacheBust: o.CacheBust}
	for _, b := range o.Buckets {
		db := dataset.Bucket{Name: b.Name, MinOutputTokens: b.MinOutputTokens, MaxTokens: b.MaxTokens}
		if b.Prompt != nil {
			db.Prompt = dataset.Range{Min: b.Prompt.Min, Max: b.Prompt.Max}
		}
		out.Buckets = append(out.Buckets, db)
	}
	return out
}

// decodeOptions turns a JS options object into a Go struct, rejecting unknown
// names: a misspelt option (sharedprefix) must not be silently ignored.
func decodeOptions(v sobek.Value, what string, into any) error {
	m, err := exportObject(v, what)
	if err != nil || m == nil {
		return err
	}
	// encoding/json matches names case-insensitively; scripts get exact names.
	if err := checkNames(m, reflect.TypeOf(into), ""); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := strictJSON(b, into); err != nil {
		return fmt.Errorf("%s: %s", what, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// checkNames walks an exported JS value alongside the Go type it will be
// decoded into and rejects object keys that are not exactly a field's name.
func checkNames(v any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return nil // parses itself
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return nil // the decoder reports the type mismatch
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			fields[name] = t.Field(i).Type
		}
		for k, sub := range m {
			ft, ok := fields[k]
			if !ok {
				return fmt.Errorf("unknown option %q", path+k)
			}
			if err := checkNames(sub, ft, path+k+"."); err != nil {
				return err
			}
		}
	case reflect.Map:
		if m, ok := v.(map[string]any); ok {
			for k, sub := range m {
				if err := checkNames(sub, t.Elem(), path+k+"."); err != nil {
					return err
				}
			}
		}
	case reflect.Slice:
		if a, ok := v.([]any); ok {
			for i, sub := range a {
				if err := checkNames(sub, t.Elem(), fmt.Sprintf("%s%d.", path, i)); err != nil {
					return err
				}
			}
		}
	default:
	}
	return nil
}

func strictJSON(b []byte, into any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// storeKey identifies a build by kind and canonical options (encoding/json
// sorts map keys, so equal options give equal keys).
func storeKey(kind string, parts ...any) string {
	b, _ := json.Marshal(parts) //nolint:errchkjson // plain data
	return kind + ":" + string(b)
}

// ---- Dataset ----

// syntheticDataset is Dataset.synthetic(options).
func (mi *ModuleInstance) syntheticDataset(opts sobek.Value) (*jsDataset, error) {
	var o syntheticOptions
	if err := decodeOptions(opts, "Dataset.synthetic options", &o); err != nil {
		return nil, err
	}
	d, err := dataset.Shared(mi.root.shared.datasets, storeKey("synthetic", o), func() (*dataset.Dataset, error) {
		return dataset.Synthetic(o.toDataset())
	})
	if err != nil {
		return nil, fmt.Errorf("Dataset.synthetic: %w", err)
	}
	return &jsDataset{d: d}, nil
}

// loadDataset is Dataset.load(path, options). It reads through k6's init
// file system, so `k6 archive` and cloud runs carry the file.
func (mi *ModuleInstance) loadDataset(path string, opts sobek.Value) (*jsDataset, error) {
	env := mi.vu.InitEnv()
	if env == nil {
		return nil, errors.New("Dataset.load must be called in the init context (outside the default function)")
	}
	if strings.TrimSpace(path) == "" {
		return nil, errors.New("Dataset.load: a file path is required")
	}
	var o loadOptions
	if err := decodeOptions(opts, "Dataset.load options", &o); err != nil {
		return nil, err
	}
	fs, ok := env.FileSystems["file"]
	if !ok {
		return nil, errors.New("Dataset.load: no file system in this k6 context")
	}
	abs := fsext.Abs(env.CWD.Path, strings.TrimPrefix(path, "file://"))
	d, err := dataset.Shared(mi.root.shared.datasets, storeKey("load", abs, o), func() (*dataset.Dataset, error) {
		data, err := fsext.ReadFile(fs, abs)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		d, err := dataset.Load(data, path, o.toDataset())
		if err == nil && len(d.Info().Scrubbed) > 0 && env.Logger != nil {
			env.Logger.Infof("llmstream: %s: scrubbing masked %v", path, d.Info().Scrubbed)
		}
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("Dataset.load: %w", err)
	}
	return &jsDataset{d: d}, nil
}

// jsDataset is what scripts hold. Its methods become next(), draw(), at(),
// size(), categories() and info(); items are fresh plain objects, so a script
// that edits one cannot change what other VUs get.
type jsDataset struct{ d *dataset.Dataset }

// Next returns the next item of the process-wide mix.
func (j *jsDataset) Next() map[string]any { return itemObject(j.d.Next()) }

// Draw returns draw n of the mix (reproducible: key it on the iteration).
func (j *jsDataset) Draw(n int64) (map[string]any, error) {
	if n < 0 {
		return nil, fmt.Errorf("draw(%d): the draw number must not be negative", n)
	}
	return itemObject(j.d.Draw(uint64(n))), nil
}

// At returns item i (modulo size).
func (j *jsDataset) At(i int64) (map[string]any, error) {
	it, err := j.d.At(int(i))
	if err != nil {
		return nil, fmt.Errorf("at(%d): %w", i, err)
	}
	return itemObject(it), nil
}

// Size is the number of distinct items.
func (j *jsDataset) Size() int { return j.d.Size() }

// Categories lists the categories drawn.
func (j *jsDataset) Categories() []string { return j.d.Categories() }

// Info describes the dataset: items per category, token ranges, what was
// skipped or masked.
func (j *jsDataset) Info() map[string]any {
	in := j.d.Info()
	cats := make([]any, len(in.Categories))
	for i, c := range in.Categories {
		cats[i] = map[string]any{
			"name": c.Name, "items": c.Items, "weight": c.Weight, "share": c.Share,
			"minPromptTokens": c.MinPromptTokens, "maxPromptTokens": c.MaxPromptTokens,
			"meanPromptTokens": c.MeanPrompt, "minMaxTokens": c.MinMaxTokens, "maxMaxTokens": c.MaxMaxTokens,
		}
	}
	return map[string]any{
		"name": in.Name, "tokenizer": in.Tokenizer, "items": in.Items, "categories": cats,
		"skipped": countsObject(in.Skipped), "scrubbed": countsObject(in.Scrubbed),
		"sharedPrefixItems": in.SharedPrefix, "cacheBust": in.CacheBust, "draws": j.d.Draws(),
	}
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
	}
}
