package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	clientproto "github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// llmdModel is the fast model with llm-d's simulator's quirks: no finish
// reason, the cached count under prompt_tokens_detail.
func llmdModel() ModelConfig {
	m := fastModel("m")
	m.OmitFinishReason, m.CachedTokensField = true, CachedFieldDetail
	return m
}

// readChat reads a chat stream with the client's call, given the request's
// limit as the binding gives it.
func readChat(t *testing.T, resp *http.Response, maxTokens int64, strict bool) *stream.Result {
	t.Helper()
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	spec, err := clientproto.Lookup("openai-chat")
	require.NoError(t, err)
	c := stream.NewCall(stream.Config{Spec: spec, MaxTokens: maxTokens, RequireFinishReason: strict}, time.Now())
	c.Headers = time.Now()
	if err := c.Consume(resp.Body); err != nil {
		c.Fail(stream.Classify(err, nil), err.Error())
	}
	return c.Finish()
}

// The llm-d shape on the wire: content chunks, a usage chunk whose cached
// count is under prompt_tokens_detail, [DONE]; no chunk names a finish.
func TestLLMDQuirksOnTheWire(t *testing.T) {
	s := newTestSim(t, llmdModel())
	for _, path := range []string{"/v1/chat/completions", "/v1/completions"} {
		body := chatBody(longPrompt, 6, streamUsage)
		if path == "/v1/completions" {
			body = `{"prompt":` + jsonString(longPrompt) + `,"max_tokens":6,` + streamUsage + `}`
		}
		resp := s.post(path, body)
		evs, err := readSSE(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, "[DONE]", evs[len(evs)-1].data, path)
		usage := evs[len(evs)-2].data
		var raw struct {
			Choices []json.RawMessage          `json:"choices"`
			Usage   map[string]json.RawMessage `json:"usage"`
		}
		require.NoError(t, json.Unmarshal([]byte(usage), &raw), usage)
		assert.Empty(t, raw.Choices, "the usage chunk has no choices")
		assert.Contains(t, raw.Usage, "prompt_tokens_detail", path)
		assert.NotContains(t, raw.Usage, "prompt_tokens_details", path)
		for _, ev := range evs[:len(evs)-1] {
			c, _ := parseChunk(t, ev.data)
			for _, ch := range c.Choices {
				assert.Nil(t, ch.FinishReason, "%s: no chunk names a finish: %s", path, ev.data)
			}
		}
	}
}

// The client reads that shape as complete answers: the finish is length,
// inferred from usage against max_tokens, and the second call of the same
// long prompt is a cache hit with the server's count. Strict, it fails them.
func TestClientReadsTheLLMDShape(t *testing.T) {
	s := newTestSim(t, llmdModel())
	const maxTokens = 9
	body := chatBody(longPrompt, maxTokens, streamUsage)
	first := readChat(t, s.post("/v1/chat/completions", body), maxTokens, false)
	require.True(t, first.OK, "%+v", first.Err)
	assert.Equal(t, "length", first.FinishReason)
	assert.Equal(t, stream.FinishInferred, first.FinishSource)
	assert.True(t, first.FinishOmitted)
	assert.Equal(t, stream.CacheMiss, first.Cache, "the server said 0 cached")

	again := readChat(t, s.post("/v1/chat/completions", body), maxTokens, false)
	require.True(t, again.OK, "%+v", again.Err)
	rec := byArrival(s.trace.recordsN(t, 2))
	require.Positive(t, rec[1].CachedTokens)
	assert.Equal(t, stream.CacheHit, again.Cache)
	assert.Equal(t, int64(rec[1].CachedTokens), again.Usage.CachedTokens)

	strict := readChat(t, s.post("/v1/chat/completions", body), maxTokens, true)
	require.False(t, strict.OK)
	assert.Equal(t, stream.ErrTruncated, strict.Err.Type)
	assert.Contains(t, strict.Err.Message, "[DONE] but no finish reason")
}

// Usage without any cached field (vLLM without --enable-prompt-tokens-details)
// leaves the cache unknown, even on a repeat the engine served from its cache.
func TestNoCachedFieldIsUnknownCache(t *testing.T) {
	m := fastModel("m")
	m.CachedTokensField = CachedFieldNone
	s := newTestSim(t, m)
	body := chatBody(longPrompt, 4, streamUsage)
	for range 2 {
		r := readChat(t, s.post("/v1/chat/completions", body), 4, false)
		require.True(t, r.OK, "%+v", r.Err)
		assert.Equal(t, "length", r.FinishReason)
		assert.Equal(t, stream.FinishFromServer, r.FinishSource)
		assert.Equal(t, stream.CacheUnknown, r.Cache)
		assert.False(t, r.Usage.CachedReported)
	}
	// The trace record is written as the response ends, after the client read its last byte.
	require.Positive(t, byArrival(s.trace.recordsN(t, 2))[1].CachedTokens, "the engine did hit its cache")

	// Non-streamed answers carry the same usage object.
	resp := s.post("/v1/chat/completions", chatBody(longPrompt, 4, ""))
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "cached_tokens")
}

// ignore_eos (vLLM's) makes a sampled length the whole max_tokens.
func TestIgnoreEOSGivesMaxTokens(t *testing.T) {
	m := fastModel("m")
	m.OutputDist, m.OutputMinTokens, m.OutputMeanTokens = "uniform", 2, 3
	s := newTestSim(t, m)
	r := readChat(t, s.post("/v1/chat/completions", chatBody("stop early", 40, streamUsage+`,"ignore_eos":true`)), 40, false)
	require.True(t, r.OK, "%+v", r.Err)
	assert.Equal(t, int64(40), r.OutputTokens)
	assert.Equal(t, "length", r.FinishReason)
	r = readChat(t, s.post("/v1/chat/completions", chatBody("stop early", 40, streamUsage)), 40, false)
	assert.Less(t, r.OutputTokens, int64(40), "without it the sampled length stands")
	assert.Equal(t, "stop", r.FinishReason)
}

func TestQuirkKnobs(t *testing.T) {
	p, err := Profile("demo")
	require.NoError(t, err)
	require.NoError(t, p.SetKnob("omit_finish_reason", "true"))
	require.NoError(t, p.SetKnob("cached_tokens_field", CachedFieldDetail))
	assert.True(t, p.OmitFinishReason)
	require.NoError(t, p.Validate())
	require.NoError(t, p.SetKnob("cached_tokens_field", "prompt_token_details"))
	err = p.Validate()
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "cached_tokens_field"), err.Error())
}
