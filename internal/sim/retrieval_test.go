package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	stdpng "image/png"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/embed"
)

func (s *testSim) answer(path, body string, header ...string) (int, []byte) {
	s.t.Helper()
	resp := s.post(path, body, header...)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return resp.StatusCode, b
}

// The client's own parsers read every answer: the routes speak the formats
// internal/embed was built from.
func TestEveryEmbeddingsRouteAnswersInItsFormat(t *testing.T) {
	t.Parallel()
	s := newTestSim(t)
	cases := []struct {
		api, path, body string
		inputs, dim     int
		tokens          bool
	}{
		{"openai", "/v1/embeddings", `{"model":"m","input":["red apples","green pears"]}`, 2, 1024, true},
		{"openai", "/v1/embeddings", `{"input":"one","encoding_format":"base64","dimensions":64}`, 1, 64, true},
		{"ollama", "/api/embed", `{"model":"m","input":["a","b","c"]}`, 3, 1024, true},
		{"tei", "/embed", `{"inputs":"hello"}`, 1, 1024, false},
		{"gemini", "/v1beta/models/m:embedContent", `{"content":{"parts":[{"text":"hi"}]},"outputDimensionality":8}`, 1, 8, false},
		{"gemini", "/v1beta/models/m:batchEmbedContents", `{"requests":[{"model":"models/m","content":{"parts":[{"text":"a"}]}},{"content":{"parts":[{"text":"b"}]}}]}`, 2, 1024, false},
	}
	for _, c := range cases {
		status, b := s.answer(c.path, c.body)
		require.Equal(t, http.StatusOK, status, "%s: %s", c.path, b)
		api, err := embed.Lookup(c.api)
		require.NoError(t, err)
		a, err := api.Parse(b, true)
		require.NoError(t, err, c.path)
		assert.Equal(t, c.inputs, a.Count, c.path)
		assert.Equal(t, c.dim, a.Dimension, c.path)
		assert.Equal(t, c.tokens, a.InputTokens > 0, c.path)
	}
	recs := s.trace.recordsN(t, len(cases))
	for i, r := range recs {
		assert.Equal(t, "embed", r.Op)
		assert.Equal(t, cases[i].inputs, r.Inputs, "one sequence per input")
		assert.Positive(t, r.PrefillStartNS, "each input was prefilled")
		assert.GreaterOrEqual(t, r.PrefillEndNS, r.PrefillStartNS)
		assert.LessOrEqual(t, r.EnqueuedNS, r.AdmittedNS)
	}
}

func TestVectorsOfTextsThatShareWordsPointTheSameWay(t *testing.T) {
	t.Parallel()
	s := newTestSim(t)
	_, b := s.answer("/v1/embeddings", `{"input":["the quarterly invoice report","the quarterly invoice summary","a green garden"]}`)
	api, _ := embed.Lookup("openai")
	a, err := api.Parse(b, true)
	require.NoError(t, err)
	dot := func(x, y []float64) (d float64) {
		for i := range x {
			d += x[i] * y[i]
		}
		return d
	}
	assert.InDelta(t, 1, dot(a.Vectors[0], a.Vectors[0]), 1e-5, "unit length")
	assert.Greater(t, dot(a.Vectors[0], a.Vectors[1]), dot(a.Vectors[0], a.Vectors[2])+0.3)
	_, again := s.answer("/v1/embeddings", `{"input":["the quarterly invoice report","the quarterly invoice summary","a green garden"]}`)
	assert.Equal(t, b, again, "the same text gets the same vector")
}

func TestRerankRoutesRankByTheSharedWords(t *testing.T) {
	t.Parallel()
	s := newTestSim(t)
	docs := `["a green garden","the invoice of the quarterly report","quarterly report"]`
	status, b := s.answer("/v1/rerank", `{"model":"m","query":"quarterly report","documents":`+docs+`,"top_n":2}`)
	require.Equal(t, http.StatusOK, status, string(b))
	co, _ := embed.LookupRerank("cohere")
	req := &embed.RerankRequest{Query: "quarterly report", Documents: make([]string, 3)}
	a, err := co.Parse(b, req)
	require.NoError(t, err)
	require.Len(t, a.Results, 2, "top_n")
	assert.Equal(t, 2, a.Results[0].Index)
	assert.Equal(t, 1, a.Results[1].Index)
	assert.Positive(t, a.InputTokens)

	status, b = s.answer("/rerank", `{"query":"quarterly report","texts":`+docs+`,"return_text":true}`)
	require.Equal(t, http.StatusOK, status, string(b))
	tei, _ := embed.LookupRerank("tei")
	a, err = tei.Parse(b, req)
	require.NoError(t, err)
	assert.Len(t, a.Results, 3, "TEI scores every text")
	assert.Contains(t, string(b), `"text":"quarterly report"`)
	for _, r := range s.trace.records(t) {
		assert.Equal(t, "rerank", r.Op)
		assert.Equal(t, 3, r.Inputs, "one pair per document")
	}
	// objects as documents (Cohere, Jina)
	status, _ = s.answer("/v2/rerank", `{"query":"q","documents":[{"text":"q"}]}`)
	assert.Equal(t, http.StatusOK, status)
}

func TestBadRetrievalRequestsAreAnsweredInTheRoutesErrorShape(t *testing.T) {
	t.Parallel()
	s := newTestSim(t)
	cases := []struct{ path, body, want string }{
		{"/v1/embeddings", `{"input":[]}`, `"param":"input"`},
		{"/v1/embeddings", `{"input":"a","encoding_format":"int8"}`, "encoding_format"},
		{"/v1/embeddings", `{"input":"a","model":"nope"}`, "model_not_found"},
		{"/embed", `{"inputs":7}`, `"error_type":"invalid_request_error"`},
		{"/api/embed", `{}`, `{"error":"'input' must be`},
		{"/v1/rerank", `{"documents":["a"]}`, "query"},
		{"/rerank", `{"query":"q","texts":[]}`, `"error_type"`},
		{"/v1beta/models/m:embedContent", `{}`, "content is not specified"},
	}
	for _, c := range cases {
		status, b := s.answer(c.path, c.body)
		assert.GreaterOrEqual(t, status, 400, c.path)
		assert.Contains(t, string(b), c.want, "%s %s", c.path, c.body)
	}
	resp, b := s.get("/v1/embeddings")
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, string(b))
}

func TestRetrievalFaultsComeAsAskedFor(t *testing.T) {
	t.Parallel()
	s := newTestSim(t)
	status, _ := s.answer("/v1/embeddings", `{"input":"a"}`, FaultHeader, "status=429")
	assert.Equal(t, 429, status)
	status, b := s.answer("/v1/embeddings", `{"input":"a"}`, FaultHeader, "html")
	assert.Equal(t, 200, status)
	assert.Contains(t, string(b), "<html>")
	start := time.Now()
	status, _ = s.answer("/v1/embeddings", `{"input":"a"}`, FaultHeader, "headers_delay=150")
	assert.Equal(t, 200, status)
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
	resp := s.post("/v1/embeddings", `{"input":"a"}`, FaultHeader, "disconnect@0")
	_, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Error(t, err, "the body is cut short")
	outcomes := map[Outcome]int{}
	for _, r := range s.trace.records(t) {
		outcomes[r.Outcome]++
	}
	assert.Equal(t, map[Outcome]int{OutcomeStatus: 1, OutcomeHTML: 1, OutcomeOK: 1, OutcomeDisconnect: 1}, outcomes)
}

// A step's time grows with the tokens it prefills: the engine's own
// timeline (not the test's clock) shows a batch of 32 taking longer than
// one input, and inputs of requests that wait together share steps.
func TestLatencyGrowsWithTheBatchAndConcurrentInputsShareSteps(t *testing.T) {
	t.Parallel()
	m := fastModel("m")
	m.PrefillBaseMs, m.PrefillPerTokenMs, m.MaxNumSeqs, m.PrefillChunkTokens = 1, 0.01, 64, 0
	s := newTestSim(t, m)
	text := strings.Repeat("word ", 100)
	one, _ := json.Marshal(map[string]any{"input": []string{text}})
	many := make([]string, 32)
	for i := range many {
		many[i] = text
	}
	batch, _ := json.Marshal(map[string]any{"input": many})
	s.answer("/v1/embeddings", string(one))
	s.answer("/v1/embeddings", string(batch))
	recs := s.trace.recordsN(t, 2)
	single, all := recs[0], recs[1]
	prefill := func(r TraceRecord) time.Duration { return time.Duration(r.PrefillEndNS - r.PrefillStartNS) }
	assert.GreaterOrEqual(t, prefill(single), time.Duration(float64(single.PromptTokens)*0.01*float64(time.Millisecond)))
	assert.Equal(t, 32*single.PromptTokens, all.PromptTokens)
	assert.GreaterOrEqual(t, prefill(all), time.Duration(float64(all.PromptTokens)*0.01*float64(time.Millisecond)))
	assert.Greater(t, prefill(all), prefill(single))

	// A long prefill holds the engine; two requests that come meanwhile
	// start their prefill in the same step.
	long, _ := json.Marshal(map[string]any{"input": []string{strings.Repeat("word ", 20000)}})
	var wg sync.WaitGroup
	wg.Go(func() { s.answer("/v1/embeddings", string(long)) })
	eng := s.srv.models["m"].eng
	require.Eventually(t, func() bool { return eng.snapshot().running == 1 }, 5*time.Second, time.Millisecond)
	for range 2 {
		wg.Go(func() { s.answer("/v1/embeddings", string(one)) })
	}
	wg.Wait()
	recs = s.trace.recordsN(t, 5)[2:]
	var later []TraceRecord
	for _, r := range recs {
		if r.PromptTokens < 1000 {
			later = append(later, r)
		}
	}
	require.Len(t, later, 2)
	assert.Equal(t, later[0].PrefillStartNS, later[1].PrefillStartNS, "one step prefilled both")
}

func TestImagesInAPromptCostPrefillTokens(t *testing.T) {
	t.Parallel()
	s := newTestSim(t)
	var pic bytes.Buffer
	require.NoError(t, stdpng.Encode(&pic, image.NewGray(image.Rect(0, 0, 56, 28))))
	png := base64.StdEncoding.EncodeToString(pic.Bytes())
	bodies := []struct{ path, body string }{
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,` + png + `"}}]}],"max_tokens":2}`},
		{"/v1/messages", `{"model":"m","max_tokens":2,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + png + `"}},{"type":"text","text":"hi"}]}]}`},
		{"/api/chat", `{"stream":false,"options":{"num_predict":2},"messages":[{"role":"user","content":"hi","images":["` + png + `"]}]}`},
		{"/v1beta/models/m:generateContent", `{"generationConfig":{"maxOutputTokens":2},"contents":[{"parts":[{"text":"hi"},{"inline_data":{"mime_type":"image/png","data":"` + png + `"}}]}]}`},
		{"/generate", `{"inputs":"![](data:image/png;base64,` + png + `)hi","parameters":{"max_new_tokens":2}}`},
		{"/v1/chat/completions", `{"messages":[{"role":"user","content":"hi"}],"max_tokens":2}`},
	}
	for _, b := range bodies {
		status, out := s.answer(b.path, b.body)
		require.Equal(t, http.StatusOK, status, "%s: %s", b.path, out)
	}
	recs := s.trace.recordsN(t, len(bodies))
	text := recs[len(recs)-1]
	assert.Zero(t, text.Images)
	for _, r := range recs[:len(recs)-1] {
		assert.Equal(t, 1, r.Images, r.Endpoint)
		assert.Equal(t, minImageTokens, r.ImageTokens, "%s: 2×1 patches of 28 px, at least the minimum", r.Endpoint)
		assert.Equal(t, text.PromptTokens+minImageTokens, r.PromptTokens, "%s: the data URL is not counted as text", r.Endpoint)
	}
}
