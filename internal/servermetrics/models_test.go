package servermetrics

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/sim"
)

// vLLM's documented /v1/models: max_model_len per entry, null for a LoRA
// adapter's (a quirk: the field is there, its value unknown).
func TestParseModelsVLLM(t *testing.T) {
	t.Parallel()
	models, err := parseModels(fixture(t, "vllm_models.json"))
	require.NoError(t, err)
	require.Len(t, models, 2)
	assert.Equal(t, "meta-llama/Llama-3.1-8B-Instruct", models[0].ID)
	require.NotNil(t, models[0].MaxModelLen)
	assert.Equal(t, int64(32768), *models[0].MaxModelLen)
	assert.Equal(t, "sql-lora", models[1].ID)
	assert.Nil(t, models[1].MaxModelLen, "null is unknown")
	assert.Equal(t, "meta-llama/Llama-3.1-8B-Instruct (context 32768 tokens), sql-lora (context unknown)", ModelsText(models))
}

// OpenAI's shape has no max_model_len: the length is unknown, not 0.
func TestParseModelsOpenAIShape(t *testing.T) {
	t.Parallel()
	models, err := parseModels(fixture(t, "openai_models.json"))
	require.NoError(t, err)
	require.Len(t, models, 2)
	for _, m := range models {
		assert.Nil(t, m.MaxModelLen, m.ID)
	}
}

// TGI's /v1/models once answered one model object, not a list.
func TestParseModelsOneObject(t *testing.T) {
	t.Parallel()
	models, err := parseModels([]byte(`{"id":"bigscience/bloom-560m","object":"model","created":0,"owned_by":"bigscience/bloom-560m"}`))
	require.NoError(t, err)
	require.Len(t, models, 1)
	assert.Equal(t, "bigscience/bloom-560m", models[0].ID)
	assert.Nil(t, models[0].MaxModelLen)
}

func TestParseModelsRefusals(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`<html>502 Bad Gateway</html>`:                  "not OpenAI's model list",
		`{"object":"list"}`:                             "no data list",
		`{"data":[{"object":"model"}]}`:                 "has no id",
		`{"data":[{"id":"m","max_model_len":-1}]}`:      "not a positive whole number",
		`{"data":[{"id":"m","max_model_len":"4096"}]}`:  "not a positive whole number",
		`{"data":[{"id":"m","max_model_len":4096.5}]}`:  "not a positive whole number",
		`{"data":{"id":"m"}}`:                           "not OpenAI's model list",
		`{"data":[{"id":"m","max_model_len":0}]}`:       "not a positive whole number",
		`{"data":[{"id":"m","max_model_len":1e400}]}`:   "not",
		`{"data":[{"id":"m","max_model_len":[4096]}]}`:  "not a positive whole number",
		`{"data":[{"id":"m","max_model_len":{}}]} junk`: "not OpenAI's model list",
	} {
		_, err := parseModels([]byte(body))
		require.ErrorContains(t, err, want, body)
	}
}

func TestModelsURL(t *testing.T) {
	t.Parallel()
	for metrics, want := range map[string]string{
		"http://vllm:8000/metrics":            "http://vllm:8000/v1/models",
		"http://gw/engine-a/metrics/":         "http://gw/engine-a/v1/models",
		"https://u:p@vllm:8000/metrics?x=1#f": "https://u:p@vllm:8000/v1/models",
	} {
		u, err := url.Parse(metrics)
		require.NoError(t, err)
		got, err := modelsURL(u, "")
		require.NoError(t, err)
		assert.Equal(t, want, got.String(), metrics)
	}
	u, _ := url.Parse("http://vllm:8000/metrics")
	got, err := modelsURL(u, "off")
	require.NoError(t, err)
	assert.Nil(t, got)
	got, err = modelsURL(u, "http://api:8080/v1/models")
	require.NoError(t, err)
	assert.Equal(t, "http://api:8080/v1/models", got.String())
	_, err = modelsURL(u, "api:8080")
	require.ErrorContains(t, err, "serverMetrics models")
}

// llm-sim is the ground truth: the view lists its models with the context
// windows it was configured with, and none where it has none.
func TestModelsFromLLMSim(t *testing.T) {
	t.Parallel()
	long, err := sim.NewModel("long", "fast")
	require.NoError(t, err)
	long.MaxContextTokens = 8192
	open, err := sim.NewModel("open", "fast")
	require.NoError(t, err)
	cfg := sim.DefaultConfig()
	cfg.Models = []sim.ModelConfig{long, open}
	srv, err := sim.New(cfg)
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = srv.Close() })

	var warns warnings
	sc, err := New(Config{URL: ts.URL + "/metrics", Interval: time.Hour, Warn: warns.add})
	require.NoError(t, err)
	sc.Start()
	sc.Stop()
	v := sc.View(nil)
	assert.Empty(t, warns.all())
	require.Len(t, v.Models, 2)
	assert.Equal(t, "long", v.Models[0].ID)
	require.NotNil(t, v.Models[0].MaxModelLen)
	assert.Equal(t, int64(8192), *v.Models[0].MaxModelLen)
	assert.Nil(t, v.Models[1].MaxModelLen)
}

// engineWithModels serves vLLM's exposition at /metrics and the handler's
// answer at /v1/models, counting the list's reads.
func engineWithModels(t *testing.T, models http.HandlerFunc) (string, *atomic.Int32) {
	t.Helper()
	var reads atomic.Int32
	body := fixture(t, "vllm_baseline.txt")
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write(body)
	})
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		reads.Add(1)
		models(w, r)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	return ts.URL, &reads
}

// A model list that is missing, slow or garbage: one warning, the scrapes
// go on, the list is unknown (absent), and it is read once.
func TestModelsBadEndpoint(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		handler http.HandlerFunc
		want    string
	}{
		"down": {func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) }, "answered HTTP 404"},
		"slow": {func(_ http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}, "did not come within"},
		"garbage": {func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("<html>oops</html>")) }, "not OpenAI's model list"},
		"cut off": {func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", "1000")
			_, _ = w.Write([]byte(`{"object":"list","data":[`))
		}, "reading the body: unexpected EOF"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root, reads := engineWithModels(t, tc.handler)
			var warns warnings
			sc, err := New(Config{URL: root + "/metrics", Interval: 50 * time.Millisecond, Timeout: 300 * time.Millisecond, Warn: warns.add})
			require.NoError(t, err)
			sc.Start()
			time.Sleep(800 * time.Millisecond)
			sc.Stop()
			v := sc.View(nil)
			require.NotNil(t, v.Run, "the scrapes went on")
			assert.Greater(t, v.Scrapes, 3, "a slow list holds no scrape")
			assert.Nil(t, v.Models)
			var about []string
			for _, w := range warns.all() {
				if strings.Contains(w, "model list") {
					about = append(about, w)
				}
			}
			require.Len(t, about, 1, "%q", warns.all())
			assert.Contains(t, about[0], tc.want)
			assert.Contains(t, about[0], "unknown")
			assert.Equal(t, int32(1), reads.Load(), "read once")
		})
	}
}

// A body past the limit is refused by size, the scrape's and the list's
// alike, each naming its own limit.
func TestBodiesPastTheirLimit(t *testing.T) {
	t.Parallel()
	// The limits as New sets them, then smaller ones for the bodies past
	// them: the same comparison, without pushing megabytes through the
	// race detector.
	sc, err := New(Config{URL: "http://127.0.0.1:1/metrics", Interval: time.Hour})
	require.NoError(t, err)
	assert.Equal(t, maxBodyBytes, sc.maxBody)
	assert.Equal(t, maxModelsBytes, sc.maxModels)
	assert.Equal(t, "16 MiB", sizeText(maxBodyBytes))
	assert.Equal(t, "4 MiB", sizeText(maxModelsBytes))
	assert.Equal(t, "64 KiB", sizeText(64<<10))
	assert.Equal(t, "1000 bytes", sizeText(1000))

	const bodyLimit, modelsLimit = 64 << 10, 16 << 10
	big := func(n int) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(bytes.Repeat([]byte("#\n"), n/2+1)) }
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", big(bodyLimit))
	mux.HandleFunc("/v1/models", big(modelsLimit))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	sc, err = New(Config{URL: ts.URL + "/metrics", Interval: time.Hour})
	require.NoError(t, err)
	sc.maxBody, sc.maxModels = bodyLimit, modelsLimit
	ctx := context.Background()
	_, _, err = sc.fetch(ctx)
	var se *scrapeError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, ProblemNotMetrics, se.kind)
	assert.Contains(t, se.msg, "body larger than 64 KiB")
	u, err := url.Parse(ts.URL + "/v1/models")
	require.NoError(t, err)
	_, err = sc.fetchModels(ctx, u, time.Minute)
	require.ErrorContains(t, err, "the model list at "+ts.URL+"/v1/models is larger than 16 KiB")
}

// 'off' reads no list; a GPU exporter (or TEI) is not asked for one.
func TestModelsNotRead(t *testing.T) {
	t.Parallel()
	root, reads := engineWithModels(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write(fixture(t, "vllm_models.json"))
	})
	sc, err := New(Config{URL: root + "/metrics", Interval: time.Hour, Models: ModelsOff})
	require.NoError(t, err)
	sc.Start()
	sc.Stop()
	assert.Nil(t, sc.View(nil).Models)
	assert.Zero(t, reads.Load())

	assert.False(t, servesModelList(EngineDCGM))
	assert.False(t, servesModelList(EngineTEI))
	assert.False(t, servesModelList(EngineUnknown))
	assert.True(t, servesModelList(EngineVLLM))
}

// The list is read with the scrape's headers (a gateway's credentials).
func TestModelsWithHeaders(t *testing.T) {
	t.Parallel()
	var auth atomic.Value
	root, _ := engineWithModels(t, func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		_, _ = w.Write(fixture(t, "vllm_models.json"))
	})
	sc, err := New(Config{URL: root + "/metrics", Interval: time.Hour, Headers: map[string]string{"Authorization": "Bearer s3cret"}})
	require.NoError(t, err)
	sc.Start()
	sc.Stop()
	assert.Equal(t, "Bearer s3cret", auth.Load())
	require.Len(t, sc.View(nil).Models, 2)
}
