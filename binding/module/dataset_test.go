package module

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/grafana/sobek"
	"github.com/sirupsen/logrus"
	"github.com/stretchr/testify/require"
	"go.k6.io/k6/js/modulestest"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/lib/fsext"
	"go.k6.io/k6/metrics"
	"gopkg.in/guregu/null.v3"

	"github.com/llmstream/xk6-llmstream/binding/datasets"
	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// newDatasetVU is newTestVU with files under /scripts/ (the script's
// directory) and a chosen root module, so several VUs can share one.
func newDatasetVU(t *testing.T, root *RootModule, files map[string]string, initCode string) *testVU {
	t.Helper()
	rt := modulestest.NewRuntime(t)
	fs := fsext.NewMemMapFs()
	for name, content := range files {
		require.NoError(t, fsext.WriteFile(fs, "/scripts/"+name, []byte(content), 0o644))
	}
	rt.VU.InitEnvField.FileSystems = map[string]fsext.Fs{"file": fs}
	rt.VU.InitEnvField.CWD = &url.URL{Scheme: "file", Path: "/scripts/"}
	require.NoError(t, rt.SetupModuleSystem(map[string]any{ImportPath: root}, nil, nil))
	_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');` + initCode)
	require.NoError(t, err)
	samples := make(chan metrics.SampleContainer, 1000)
	logs := &strings.Builder{}
	logger := logrus.New()
	logger.SetOutput(logs)
	rt.MoveToVUContext(&lib.State{
		Options:        lib.Options{SystemTags: &metrics.DefaultSystemTagSet, MaxRedirects: null.IntFrom(10)},
		Logger:         logger,
		Transport:      &http.Transport{DisableCompression: true},
		BufferPool:     lib.NewBufferPool(),
		Samples:        samples,
		Tags:           lib.NewVUStateTags(rt.VU.InitEnvField.Registry.RootTagSet()),
		BuiltinMetrics: rt.BuiltinMetrics,
	})
	return &testVU{t: t, rt: rt, samples: samples, logs: logs}
}

func initError(t *testing.T, files map[string]string, code string) string {
	t.Helper()
	rt := modulestest.NewRuntime(t)
	fs := fsext.NewMemMapFs()
	for name, content := range files {
		require.NoError(t, fsext.WriteFile(fs, "/scripts/"+name, []byte(content), 0o644))
	}
	rt.VU.InitEnvField.FileSystems = map[string]fsext.Fs{"file": fs}
	rt.VU.InitEnvField.CWD = &url.URL{Scheme: "file", Path: "/scripts/"}
	require.NoError(t, rt.SetupModuleSystem(map[string]any{ImportPath: New()}, nil, nil))
	_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');` + code)
	require.Error(t, err, code)
	return err.Error()
}

func TestDatasetSyntheticItemsInJS(t *testing.T) {
	t.Parallel()
	vu := newDatasetVU(t, New(), nil, `const d = llm.Dataset.synthetic({seed: 7, variants: 20,
		mix: {short: 3, medium: 1}});`)
	v := vu.run(`const out = [];
		for (let i = 0; i < 8; i++) { const p = d.next(); out.push([p.category, p.promptTokens, p.maxTokens,
			p.messages.length, p.messages[0].role, typeof p.messages[0].content, p.prompt === p.messages[0].content,
			p.turn, p.sharedPrefix, p.cacheBust, p.id]) }
		JSON.stringify({out, size: d.size(), cats: d.categories(), info: d.info()})`)
	var got struct {
		Out  [][]any
		Size int
		Cats []string
		Info map[string]any
	}
	require.NoError(t, json.Unmarshal([]byte(v.String()), &got))
	require.Equal(t, 40, got.Size)
	require.Equal(t, []string{"medium", "short"}, got.Cats)
	short := 0
	for _, row := range got.Out {
		cat, tokens := row[0].(string), row[1].(float64) //nolint:forcetypeassert
		if cat == "short" {
			short++
			require.True(t, tokens >= 10 && tokens <= 50, "%v", row)
		} else {
			require.True(t, tokens >= 200 && tokens <= 500, "%v", row)
		}
		require.Equal(t, []any{1.0, "user", "string", true, 1.0, false, false}, row[3:10])
	}
	require.Equal(t, 6, short, "8 draws of a 3:1 mix hold 6 short")
	require.EqualValues(t, 8, got.Info["draws"])
	require.Equal(t, "o200k_base", got.Info["tokenizer"])
}

func TestDatasetItemsFeedClientChat(t *testing.T) {
	t.Parallel()
	srv := recordBodies(t, func(w http.ResponseWriter, _ *http.Request, _ map[string]any) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = fmt.Fprint(w, roleChunk, chunk("ok", ""), chunk("", "stop"), usageChunk(3, 1, 0), "data: [DONE]\n\n")
	})
	vu := newDatasetVU(t, New(), nil, fmt.Sprintf(`
		const client = new llm.Client({baseURL: %q, model: 'm'});
		const d = llm.Dataset.synthetic({seed: 1, variants: 2, mix: {short: 1}, turns: {min: 2, max: 2},
			sharedPrefix: {count: 1, tokens: 40}});`, srv.URL))
	vu.run(`(async () => {
		const p = d.next();
		await client.chat({messages: p.messages, max_tokens: p.maxTokens},
			{tags: {category: p.category, turn: String(p.turn)}});
		const q = d.next(); // {item} tags the call with the item's category and turn
		await client.chat({messages: q.messages, max_tokens: q.maxTokens}, {item: q}) })()`)
	bodies := srv.all()
	require.Len(t, bodies, 2)
	// Turn 1 then turn 2 of one conversation: system prefix, then the history.
	require.Len(t, bodies[0]["messages"], 2)
	require.Len(t, bodies[1]["messages"], 4)
	first := bodies[1]["messages"].([]any)[0].(map[string]any) //nolint:forcetypeassert
	require.Equal(t, "system", first["role"])
	got := vu.drain()
	require.Len(t, got["llm_ttft"], 2)
	require.Equal(t, "short", got["llm_ttft"][0].Tags.Map()["category"])
	require.Equal(t, "1", got["llm_ttft"][0].Tags.Map()["turn"])
	require.Equal(t, "2", got["llm_ttft"][1].Tags.Map()["turn"])
	require.Equal(t, "short", got["llm_ttft"][1].Tags.Map()["category"])
}

func TestDatasetLoadThroughInitFileSystem(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"data/p.jsonl": `{"prompt": "mail me at a.b@example.com"}` + "\n" + `{"prompt": "hello there"}` + "\n",
		"chat.json":    `[{"id": "c1", "conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}]`,
	}
	vu := newDatasetVU(t, New(), files, `
		const a = llm.Dataset.load('data/p.jsonl', {scrub: true});
		const b = llm.Dataset.load('./chat.json');`)
	v := vu.run(`JSON.stringify([a.size(), a.at(0).prompt, a.info().scrubbed.email, b.next().prompt, b.at(0).maxTokens])`)
	require.JSONEq(t, `[2, "mail me at [EMAIL]", 1, "hi", 1]`, v.String())
	// Loading is an init-context operation, like open().
	_, err := vu.rt.RunOnEventLoop(`llm.Dataset.load('data/p.jsonl')`)
	require.ErrorContains(t, err, "init context")
}

func TestDatasetErrorsInJS(t *testing.T) {
	t.Parallel()
	files := map[string]string{"bad.jsonl": "{\"prompt\": \"ok\"}\n{\"prompt\": \n"}
	for code, want := range map[string]string{
		`llm.Dataset.load('bad.jsonl')`:                                           "bad.jsonl:2: invalid JSON",
		`llm.Dataset.load('missing.jsonl')`:                                       "missing.jsonl",
		`llm.Dataset.load('')`:                                                    "a file path is required",
		`llm.Dataset.load('bad.jsonl', {scrubb: true})`:                           `unknown option "scrubb"`,
		`llm.Dataset.synthetic({sharedprefix: {count: 1}})`:                       `unknown option "sharedprefix"`,
		`llm.Dataset.synthetic({mix: {huge: 1}})`:                                 `category "huge"`,
		`llm.Dataset.synthetic({turns: [1, 2, 3]})`:                               "[min, max]",
		`llm.Dataset.synthetic({categories: {x: {prompt: 5}}})`:                   "give it prompt and maxTokens",
		`llm.Dataset.synthetic({sharedPrefix: {count: 1, token: 9}})`:             `unknown option "sharedPrefix.token"`,
		`llm.Dataset.synthetic({categories: {x: {prompt: 5, max_tokens: 1}}})`:    `unknown option "categories.x.max_tokens"`,
		`llm.Dataset.load('bad.jsonl', {buckets: [{name: 'a', Prompt: [1, 2]}]})`: `unknown option "buckets[0].Prompt" (did you mean "prompt"?)`,
		`llm.Dataset.synthetic({sharedprefix: {count: 1}, seed: 1})`: `Dataset.synthetic options: unknown option "sharedprefix" ` +
			`(did you mean "sharedPrefix"?); known: seed, mix, categories, tokenizer, variants, sharedPrefix, cacheBust, turns`,
		`llm.Dataset.synthetic({variants: 2.5})`:          "Dataset.synthetic options: variants must be a whole number of items above 0 (leave it out for the default), got 2.5",
		`llm.Dataset.synthetic({turns: 'two'})`:           `turns must be a number, [min, max] or {min, max}, got "two"`,
		`llm.Dataset.synthetic({turns: {min: 1, mx: 3}})`: `unknown option "turns.mx" (did you mean "max"?); known: min, max`,
		`llm.Dataset.synthetic({mix: {short: '3'}})`:      `mix.short must be a number, got "3"`,
		`llm.Dataset.synthetic('short')`:                  `Dataset.synthetic options must be an object, got "short"`,
		`llm.Arrivals.bursty({rate: 5, sede: 1})`:         `Arrivals.bursty options: unknown option "sede" (did you mean "seed"?); known: rate, cv, seed, name`,
		`llm.Arrivals.poisson({rate: '5/s'})`:             `Arrivals.poisson options: rate must be a number, got "5/s"`,
		`llm.Arrivals.poisson({rate: 0})`:                 "rate must be a positive",
		`llm.Arrivals.poisson({rate: 1, cv: 3})`:          "Arrivals.bursty",
	} {
		require.Contains(t, initError(t, files, code), want, code)
	}
}

func TestDatasetSharedAcrossVUs(t *testing.T) {
	t.Parallel()
	root := New()
	init := `const d = llm.Dataset.synthetic({seed: 3, variants: 2, mix: {short: 1, long_output: 1}});
		const arr = llm.Arrivals.bursty({rate: 1000, seed: 1});`
	a := newDatasetVU(t, root, nil, init)
	b := newDatasetVU(t, root, nil, init)
	// One draw sequence for the process: VU b continues where VU a stopped.
	a.run(`d.next(); d.next(); d.next()`)
	require.Equal(t, int64(4), b.run(`d.next(); d.info().draws`).ToInteger())
	a.run(`arr.next()`)
	require.Equal(t, int64(2), b.run(`arr.next(); arr.stats().claimed`).ToInteger())
	require.Equal(t, 2, root.datasets.Len())
	// Draw n is the same item whichever VU asks.
	require.Equal(t, a.run(`d.draw(5).id`).String(), b.run(`d.draw(5).id`).String())
	// Items are fresh objects: editing one does not reach the other VU.
	a.run(`const x = d.at(0); x.messages[0].content = 'changed'; x.prompt = 'changed'`)
	require.NotEqual(t, "changed", b.run(`d.at(0).messages[0].content`).String())
}

func TestArrivalsInJS(t *testing.T) {
	t.Parallel()
	vu := newDatasetVU(t, New(), nil, `const p = llm.Arrivals.poisson({rate: 50, seed: 2});`)
	v := vu.run(`const o = p.offsets(100); const w = p.next();
		JSON.stringify([o.length, o.every((t, i) => i === 0 || t >= o[i-1]), typeof w, w >= 0, p.stats().cv])`)
	var got []any
	require.NoError(t, json.Unmarshal([]byte(v.String()), &got))
	n := got[0].(float64) //nolint:forcetypeassert
	require.InDelta(t, 5000, n, 500, "50/s over 100 s")
	require.Equal(t, []any{true, "number", true, 1.0}, got[1:])
}

// One dataset, many VUs: the items are held once per process. Every VU's
// Dataset.load of the same file returns the same Go dataset, and the heap
// grows by the dataset once, not once per VU. LLMSTREAM_DATASET_MB sets the
// file size (default 2 MB; BENCHMARKS.md records a 50 MB run).
func TestDatasetOneCopyForManyVUs(t *testing.T) {
	mb := 2
	if s := os.Getenv("LLMSTREAM_DATASET_MB"); s != "" {
		var err error
		mb, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	const vus = 1000
	var file strings.Builder
	line := 0
	for file.Len() < mb<<20 {
		line++
		fmt.Fprintf(&file, `{"prompt": "Request %d: summarise the quarterly report of the regional warehouse `+
			`and list the delayed shipments, the open invoices and the next steps for the finance team."}`+"\n", line)
	}
	root := New()
	rt := modulestest.NewRuntime(t)
	fs := fsext.NewMemMapFs()
	require.NoError(t, fsext.WriteFile(fs, "/scripts/big.jsonl", []byte(file.String()), 0o644))
	fileBytes := file.Len()
	file.Reset()
	env := rt.VU.InitEnvField
	env.FileSystems = map[string]fsext.Fs{"file": fs}
	env.CWD = &url.URL{Scheme: "file", Path: "/scripts/"}

	var keep []any // VUs hold their instances and datasets for the whole test
	load := func() *datasets.JSDataset {
		vu := &modulestest.VU{CtxField: rt.VU.CtxField, RuntimeField: rt.VU.RuntimeField, InitEnvField: env}
		inst := root.NewModuleInstance(vu)
		keep = append(keep, inst)
		ds := inst.Exports().Named["Dataset"].(map[string]any)                    //nolint:forcetypeassert
		fn := ds["load"].(func(string, sobek.Value) (*datasets.JSDataset, error)) //nolint:forcetypeassert
		d, err := fn("big.jsonl", sobek.Undefined())
		require.NoError(t, err)
		keep = append(keep, d)
		return d
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	// The file itself sits in the in-memory file system and the tokenizer's
	// tables load once per process: measure past both.
	tk, err := tokenizer.Get("")
	require.NoError(t, err)
	tk.Count("warm up")
	before := heap()
	first := load()
	afterOne := heap()
	for range vus - 1 {
		require.Same(t, datasets.DatasetOf(first), datasets.DatasetOf(load()))
	}
	afterAll := heap()
	one := int64(afterOne) - int64(before)
	rest := int64(afterAll) - int64(afterOne)
	runtime.KeepAlive(keep)
	t.Logf("file %.1f MB, %d items: first VU +%.1f MB heap, %d more VUs +%.2f MB (%.0f bytes/VU)",
		float64(fileBytes)/(1<<20), datasets.DatasetOf(first).Size(), float64(one)/(1<<20), vus-1, float64(rest)/(1<<20),
		float64(rest)/float64(vus-1))
	require.Greater(t, one, int64(fileBytes)/2, "the first load holds the prompts")
	// A copy per VU would add ~1000× the dataset; allow per-VU bookkeeping
	// only (a VU's module instance, its metrics table, transports, schedule
	// slot and pace: about 1.3 KB, a third of a 4 MB load over 999 VUs).
	require.Less(t, rest, one/3, "VUs after the first must not copy the dataset")
}

// BenchmarkDatasetNextJS: d.next() called from a script, item object
// included (what a VU pays per iteration).
func BenchmarkDatasetNextJS(b *testing.B) {
	rt := modulestest.NewRuntime(b)
	require.NoError(b, rt.SetupModuleSystem(map[string]any{ImportPath: New()}, nil, nil))
	_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');
		const d = llm.Dataset.synthetic({seed: 1, variants: 4});
		function draw(n) { let t = 0; for (let i = 0; i < n; i++) { const p = d.next(); t += p.messages.length + p.maxTokens } return t }`)
	require.NoError(b, err)
	draw, ok := sobek.AssertFunction(rt.VU.Runtime().Get("draw"))
	require.True(b, ok)
	b.ReportAllocs()
	b.ResetTimer()
	_, err = draw(sobek.Undefined(), rt.VU.Runtime().ToValue(b.N))
	require.NoError(b, err)
}
