package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

func countTokens(t *testing.T, s string) int {
	t.Helper()
	tk, err := tokenizer.Get("")
	require.NoError(t, err)
	return tk.Count(s)
}

// serverTiming parses "a;dur=1.2, b;dur=3" into ms by name.
func serverTiming(t *testing.T, v string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, part := range strings.Split(v, ",") {
		name, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		require.True(t, ok, v)
		d, ok := strings.CutPrefix(params, "dur=")
		require.True(t, ok, v)
		f, err := strconv.ParseFloat(d, 64)
		require.NoError(t, err, v)
		out[name] = f
	}
	return out
}

func TestChatStreamIsSpecConformant(t *testing.T) {
	s := newTestSim(t)
	prompt := "Tell me about the sea and the rivers that run into it."
	resp := s.post("/v1/chat/completions", chatBody(prompt, 12, streamUsage), "X-Request-Id", "req-abc")
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, "req-abc", resp.Header.Get("X-Request-Id"))
	assert.Contains(t, resp.Trailer, "Server-Timing", "declared as a trailer")
	evs, err := readSSE(resp.Body)
	require.NoError(t, err)
	require.Len(t, evs, 1+12+1+1+1) // role, content ×12, finish, usage, [DONE]

	var id string
	var created int64
	var text strings.Builder
	for i, ev := range evs[:len(evs)-1] {
		c, raw := parseChunk(t, ev.data)
		if i == 0 {
			id, created = c.ID, c.Created
		}
		assert.Equal(t, id, c.ID, "same id on every chunk")
		assert.Equal(t, created, c.Created)
		assert.Equal(t, "chat.completion.chunk", c.Object)
		assert.Equal(t, "m", c.Model)
		switch {
		case i == 0: // role only
			require.Len(t, c.Choices, 1)
			assert.Equal(t, "assistant", *c.Choices[0].Delta.Role)
			assert.Empty(t, *c.Choices[0].Delta.Content)
			assert.Nil(t, c.Choices[0].FinishReason)
			assert.Equal(t, "null", string(raw["usage"]))
		case i <= 12: // content
			require.Len(t, c.Choices, 1)
			assert.Nil(t, c.Choices[0].Delta.Role)
			require.NotNil(t, c.Choices[0].Delta.Content)
			text.WriteString(*c.Choices[0].Delta.Content)
			assert.Nil(t, c.Choices[0].FinishReason)
		case i == 13: // finish
			require.Len(t, c.Choices, 1)
			assert.Nil(t, c.Choices[0].Delta.Content)
			assert.Equal(t, "length", *c.Choices[0].FinishReason)
			assert.Equal(t, "null", string(raw["usage"]))
		case i == 14: // usage
			assert.Equal(t, "[]", string(raw["choices"]))
			require.NotNil(t, c.Usage)
			assert.Equal(t, countTokens(t, prompt), c.Usage.PromptTokens)
			assert.Equal(t, 12, c.Usage.CompletionTokens)
			assert.Equal(t, c.Usage.PromptTokens+12, c.Usage.TotalTokens)
			assert.Equal(t, 0, c.Usage.PromptTokensDetails.CachedTokens)
		}
	}
	assert.Equal(t, "[DONE]", evs[len(evs)-1].data)
	assert.Equal(t, 12, countTokens(t, text.String()), "each output token is one o200k token: %q", text.String())
	assert.Equal(t, "chatcmpl-req-abc", id)

	st := serverTiming(t, resp.Trailer.Get("Server-Timing"))
	for _, phase := range []string{"queue", "prefill", "decode", "total"} {
		assert.Contains(t, st, phase)
		assert.GreaterOrEqual(t, st[phase], 0.0)
	}
	assert.GreaterOrEqual(t, st["total"], st["queue"])
}

func TestChatStreamWithoutUsageAndWithContinuousUsage(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1/chat/completions", chatBody("hi", 3, `"stream":true`))
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Len(t, evs, 1+3+1+1) // no usage chunk
	for _, ev := range evs[:len(evs)-1] {
		_, raw := parseChunk(t, ev.data)
		assert.NotContains(t, raw, "usage")
	}

	resp = s.post("/v1/chat/completions", chatBody("hi", 3, `"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`))
	evs, err = readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Len(t, evs, 1+3+1+1+1)
	want := []int{0, 1, 2, 3, 3, 3}
	for i, ev := range evs[:len(evs)-1] {
		c, _ := parseChunk(t, ev.data)
		require.NotNil(t, c.Usage, ev.data)
		assert.Equal(t, want[i], c.Usage.CompletionTokens, "chunk %d", i)
		assert.Equal(t, countTokens(t, "hi"), c.Usage.PromptTokens)
	}
}

func TestChatNonStream(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1/chat/completions", chatBody("What is the capital of France?", 7, ""))
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.NotEmpty(t, resp.Header.Get("X-Request-Id"))
	assert.Contains(t, serverTiming(t, resp.Header.Get("Server-Timing")), "total")
	var out struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Message      struct{ Role, Content string } `json:"message"`
			FinishReason string                         `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			Prompt     int `json:"prompt_tokens"`
			Completion int `json:"completion_tokens"`
		} `json:"usage"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	assert.Equal(t, "chat.completion", out.Object)
	assert.True(t, strings.HasPrefix(out.ID, "chatcmpl-"))
	require.Len(t, out.Choices, 1)
	assert.Equal(t, "assistant", out.Choices[0].Message.Role)
	assert.Equal(t, 7, countTokens(t, out.Choices[0].Message.Content))
	assert.Equal(t, "length", out.Choices[0].FinishReason)
	assert.Equal(t, 7, out.Usage.Completion)
	assert.Equal(t, countTokens(t, "What is the capital of France?"), out.Usage.Prompt)
}

func TestSameQuestionSameAnswer(t *testing.T) {
	s := newTestSim(t)
	answer := func(body string) string {
		resp := s.post("/v1/chat/completions", body)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var out struct {
			Choices []struct{ Message struct{ Content string } } `json:"choices"`
		}
		require.NoError(t, json.Unmarshal(b, &out))
		return out.Choices[0].Message.Content
	}
	a := answer(chatBody("one", 20, ""))
	assert.Equal(t, a, answer(chatBody("one", 20, "")))
	assert.NotEqual(t, a, answer(chatBody("two", 20, "")))
	assert.NotEqual(t, a, answer(chatBody("one", 20, `"seed":5`)))
}

func TestCompletions(t *testing.T) {
	s := newTestSim(t)
	resp := s.post("/v1/completions", `{"prompt":"Once upon a time","max_tokens":4,"stream":true,"stream_options":{"include_usage":true}}`)
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Len(t, evs, 4+1+1+1) // no role chunk
	for i, ev := range evs[:4] {
		c, _ := parseChunk(t, ev.data)
		assert.Equal(t, "text_completion", c.Object)
		assert.True(t, strings.HasPrefix(c.ID, "cmpl-"))
		require.NotNil(t, c.Choices[0].Text, "chunk %d", i)
		assert.NotEmpty(t, *c.Choices[0].Text)
	}
	c, _ := parseChunk(t, evs[4].data)
	assert.Equal(t, "length", *c.Choices[0].FinishReason)
	c, _ = parseChunk(t, evs[5].data)
	assert.Equal(t, countTokens(t, "Once upon a time"), c.Usage.PromptTokens)
	assert.Equal(t, "[DONE]", evs[6].data)

	// Token-id prompts count as given; non-stream answers are text_completion.
	resp = s.post("/v1/completions", `{"prompt":[1,2,3,4,5],"max_tokens":2}`)
	defer resp.Body.Close()
	var out struct {
		Object  string `json:"object"`
		Choices []struct {
			Text         string `json:"text"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			Prompt int `json:"prompt_tokens"`
		} `json:"usage"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	assert.Equal(t, "text_completion", out.Object)
	assert.Equal(t, 5, out.Usage.Prompt)
	assert.Equal(t, 2, countTokens(t, out.Choices[0].Text))
}

func TestModelsHealthMetricsAndRouting(t *testing.T) {
	slow := fastModel("sim-small")
	slow.DecodeBaseMs = 1
	slow.MaxContextTokens = 4096
	s := newTestSim(t, fastModel("sim-large"), slow)

	resp, body := s.get("/v1/models")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("X-Request-Id"))
	var models struct {
		Object string `json:"object"`
		Data   []struct {
			ID          string `json:"id"`
			Object      string `json:"object"`
			MaxModelLen *int   `json:"max_model_len"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(body, &models))
	assert.Equal(t, "list", models.Object)
	require.Len(t, models.Data, 2)
	assert.Equal(t, "sim-large", models.Data[0].ID)
	assert.Equal(t, "model", models.Data[0].Object)
	assert.Nil(t, models.Data[0].MaxModelLen, "no context window: no length, not 0")
	require.NotNil(t, models.Data[1].MaxModelLen)
	assert.Equal(t, 4096, *models.Data[1].MaxModelLen, "vLLM's max_model_len is the context window")

	resp, body = s.get("/health")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.JSONEq(t, `{"status":"ok"}`, string(body))

	// No model: the first configured; a named model answers as itself.
	for _, tc := range []struct{ extra, want string }{{"", "sim-large"}, {`"model":"sim-small"`, "sim-small"}, {`"model":"sim-large"`, "sim-large"}} {
		resp := s.post("/v1/chat/completions", chatBody("x", 2, tc.extra))
		var out struct{ Model string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		resp.Body.Close()
		assert.Equal(t, tc.want, out.Model)
	}
	resp = s.post("/v1/chat/completions", chatBody("x", 2, `"model":"nope"`))
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)

	resp, body = s.get("/metrics")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	m := string(body)
	for _, want := range []string{
		`llmsim_requests_waiting{model="sim-large"} 0`,
		`llmsim_requests_running{model="sim-small"} 0`,
		`llmsim_generation_tokens_total{model="sim-large"} 4`,
		`llmsim_generation_tokens_total{model="sim-small"} 2`,
		`llmsim_requests_total{model="sim-large",outcome="ok"} 2`,
		`llmsim_requests_total{model="sim-small",outcome="ok"} 1`,
		`llmsim_requests_total{model="",outcome="bad_request"} 1`,
		`# TYPE llmsim_prefix_cache_hit_rate gauge`,
		`llmsim_prefix_cache_queries_total{model="sim-large"}`,
	} {
		assert.Contains(t, m, want)
	}
}

func TestRequestIDEverywhere(t *testing.T) {
	s := newTestSim(t)
	for _, path := range []string{"/health", "/v1/models", "/metrics", "/nope"} {
		resp, _ := s.get(path)
		assert.True(t, strings.HasPrefix(resp.Header.Get("X-Request-Id"), "sim-"), path)
	}
	resp := s.post("/v1/chat/completions", `{`, "X-Request-Id", "mine-1")
	resp.Body.Close()
	assert.Equal(t, "mine-1", resp.Header.Get("X-Request-Id"))
	// A request id with spaces or control bytes is not echoed.
	resp = s.post("/v1/chat/completions", `{`, "X-Request-Id", "a b")
	resp.Body.Close()
	assert.True(t, strings.HasPrefix(resp.Header.Get("X-Request-Id"), "sim-"))
	// Generated ids are unique.
	seen := map[string]bool{}
	for range 20 {
		resp, _ := s.get("/health")
		id := resp.Header.Get("X-Request-Id")
		assert.False(t, seen[id])
		seen[id] = true
	}
}

func TestBadRequestsGetOpenAIErrors(t *testing.T) {
	cfg := fastModel("m")
	s := newTestSim(t, cfg)
	huge := `{"messages":[{"role":"user","content":"` + strings.Repeat("a", 9<<20) + `"}]}`
	for _, tc := range []struct {
		name, method, path, body, fault string
		status                          int
		param                           string
	}{
		{"invalid JSON", "POST", "/v1/chat/completions", `{"messages":`, "", 400, ""},
		{"not an object", "POST", "/v1/chat/completions", `[1,2]`, "", 400, ""},
		{"empty body", "POST", "/v1/chat/completions", ``, "", 400, ""},
		{"missing messages", "POST", "/v1/chat/completions", `{"model":"m"}`, "", 400, "messages"},
		{"empty messages", "POST", "/v1/chat/completions", `{"messages":[]}`, "", 400, "messages"},
		{"messages not an array", "POST", "/v1/chat/completions", `{"messages":"hi"}`, "", 400, "messages"},
		{"message without role", "POST", "/v1/chat/completions", `{"messages":[{"content":"hi"}]}`, "", 400, "messages[0].role"},
		{"bad content", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, "", 400, "messages[0].content"},
		{"negative max_tokens", "POST", "/v1/chat/completions", chatBody("hi", 0, `"max_tokens":-5`), "", 400, "max_tokens"},
		{"zero max_completion_tokens", "POST", "/v1/chat/completions", chatBody("hi", 0, `"max_completion_tokens":0`), "", 400, "max_completion_tokens"},
		{"huge max_tokens", "POST", "/v1/chat/completions", chatBody("hi", 0, `"max_tokens":100000000`), "", 400, "max_tokens"},
		{"max_tokens a string", "POST", "/v1/chat/completions", chatBody("hi", 0, `"max_tokens":"ten"`), "", 400, "max_tokens"},
		{"stream not a bool", "POST", "/v1/chat/completions", chatBody("hi", 0, `"stream":"yes"`), "", 400, "stream"},
		{"n = 2", "POST", "/v1/chat/completions", chatBody("hi", 0, `"n":2`), "", 400, "n"},
		{"stream_options without stream", "POST", "/v1/chat/completions", chatBody("hi", 0, `"stream_options":{"include_usage":true}`), "", 400, "stream_options"},
		{"unknown model", "POST", "/v1/chat/completions", chatBody("hi", 0, `"model":"gpt-9"`), "", 404, "model"},
		{"oversized body", "POST", "/v1/chat/completions", huge, "", 413, ""},
		{"bad fault header", "POST", "/v1/chat/completions", chatBody("hi", 0, ""), "explode=1", 400, FaultHeader},
		{"missing prompt", "POST", "/v1/completions", `{"max_tokens":3}`, "", 400, "prompt"},
		{"two prompts", "POST", "/v1/completions", `{"prompt":["a","b"]}`, "", 400, "prompt"},
		{"prompt an object", "POST", "/v1/completions", `{"prompt":{}}`, "", 400, "prompt"},
		{"GET on chat", "GET", "/v1/chat/completions", ``, "", 405, ""},
		{"POST on models", "POST", "/v1/models", `{}`, "", 405, ""},
		{"unknown path", "POST", "/v1/audio/speech", `{}`, "", 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, s.ts.URL+tc.path, strings.NewReader(tc.body))
			require.NoError(t, err)
			if tc.fault != "" {
				req.Header.Set(FaultHeader, tc.fault)
			}
			resp, err := s.client.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, tc.status, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var e struct {
				Error struct {
					Message string  `json:"message"`
					Type    string  `json:"type"`
					Param   *string `json:"param"`
					Code    any     `json:"code"`
				} `json:"error"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
			assert.NotEmpty(t, e.Error.Message)
			assert.NotEmpty(t, e.Error.Type)
			if tc.param != "" {
				require.NotNil(t, e.Error.Param, e.Error.Message)
				assert.Equal(t, tc.param, *e.Error.Param, e.Error.Message)
			}
		})
	}
	// Still serving.
	resp := s.post("/v1/chat/completions", chatBody("still there?", 3, ""))
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	var bad int
	for _, r := range s.trace.records(t) {
		if r.Outcome == OutcomeBadRequest {
			bad++
			assert.GreaterOrEqual(t, r.Status, 400)
			assert.NotEmpty(t, r.Error)
		}
	}
	assert.Equal(t, 21, bad, "every rejected generation request is in the trace")
}

func TestPrefixCacheOverHTTP(t *testing.T) {
	s := newTestSim(t)
	system := strings.Repeat("You are a careful assistant who answers briefly. ", 20)
	body := func(q string) string {
		sys, _ := json.Marshal(system)
		qq, _ := json.Marshal(q)
		return `{"messages":[{"role":"system","content":` + string(sys) + `},{"role":"user","content":` + string(qq) + `}],"max_tokens":2,` + streamUsage + `}`
	}
	usage := func(q string) (int, int) {
		resp := s.post("/v1/chat/completions", body(q))
		evs, err := readSSE(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		c, _ := parseChunk(t, evs[len(evs)-2].data)
		require.NotNil(t, c.Usage)
		return c.Usage.PromptTokens, c.Usage.PromptTokensDetails.CachedTokens
	}
	p1, c1 := usage("first question?")
	assert.Equal(t, 0, c1)
	p2, c2 := usage("second question?")
	assert.Greater(t, c2, p1/2, "the shared system prompt is cached")
	assert.Less(t, c2, p2)
	assert.Equal(t, 0, c2%16, "whole blocks only")
	resp, body2 := s.get("/metrics")
	resp.Body.Close()
	assert.Contains(t, string(body2), `llmsim_prefix_cache_hits_total{model="m"} `+strconv.Itoa(c2))
}

func TestQueueFullGets429(t *testing.T) {
	m := fastModel("m")
	m.MaxNumSeqs, m.MaxQueue, m.DecodeBaseMs, m.RetryAfterSec = 1, 0, 20, 3
	s := newTestSim(t, m)
	first := s.post("/v1/chat/completions", chatBody("a", 50, `"stream":true`))
	defer first.Body.Close()
	require.Equal(t, http.StatusOK, first.StatusCode) // holds the only slot for ~1 s
	resp := s.post("/v1/chat/completions", chatBody("b", 5, `"stream":true`))
	defer resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "3", resp.Header.Get("Retry-After"))
	var e struct {
		Error struct{ Code, Type string } `json:"error"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
	assert.Equal(t, "rate_limit_exceeded", e.Error.Code)
}

func TestTraceMatchesWhatTheClientReceived(t *testing.T) {
	m := fastModel("m")
	m.DecodeBaseMs, m.PrefillBaseMs, m.PrefillPerTokenMs = 2, 1, 0.01
	s := newTestSim(t, m)
	start := nowNS()
	resp := s.post("/v1/chat/completions", chatBody("Where does the time go?", 10, streamUsage), "X-Request-Id", "trace-1")
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	end := nowNS()
	_ = s.srv.Close() // flushes the trace

	recs := s.trace.recordsN(t, 1)
	r := recs[0]
	assert.Equal(t, "trace-1", r.RequestID)
	assert.Equal(t, "m", r.Model)
	assert.Equal(t, OutcomeOK, r.Outcome)
	assert.Equal(t, 200, r.Status)
	assert.Equal(t, "length", r.FinishReason)
	// One chunk time per event the client read, each no later than its arrival.
	require.Len(t, r.ChunksNS, len(evs))
	require.Len(t, r.ChunkTokens, len(evs))
	require.Len(t, r.EmitNS, len(evs))
	tokens := 0
	for i, ev := range evs {
		assert.LessOrEqual(t, r.ChunksNS[i], unixNano(ev.at), "event %d", i)
		if i > 0 {
			assert.LessOrEqual(t, r.ChunksNS[i-1], r.ChunksNS[i])
		}
		c, _ := parseChunk(t, strings.Replace(ev.data, "[DONE]", "{}", 1))
		n := 0
		if len(c.Choices) == 1 && c.Choices[0].Delta != nil && c.Choices[0].Delta.Content != nil && *c.Choices[0].Delta.Content != "" {
			n = 1
		}
		assert.Equal(t, n, r.ChunkTokens[i], "event %d", i)
		tokens += n
		if c.Usage != nil {
			assert.Equal(t, r.PromptTokens, c.Usage.PromptTokens)
			assert.Equal(t, r.CompletionTokens, c.Usage.CompletionTokens)
			assert.Equal(t, r.CachedTokens, c.Usage.PromptTokensDetails.CachedTokens)
		}
	}
	assert.Equal(t, 10, tokens)
	assert.Equal(t, 10, r.CompletionTokens)
	assert.Equal(t, r.ChunksNS[1], r.FirstTokenNS)
	// The phases are in order and inside the client's window.
	seq := []int64{start, r.ArrivalNS, r.EnqueuedNS, r.AdmittedNS, r.PrefillStartNS, r.PrefillEndNS, r.FirstTokenNS, r.DoneNS, end}
	for i := 1; i < len(seq); i++ {
		assert.LessOrEqual(t, seq[i-1], seq[i], "phase %d", i)
	}
	assert.LessOrEqual(t, r.ArrivalNS, r.HeadersNS)
	assert.LessOrEqual(t, r.HeadersNS, r.ChunksNS[0])
	// Decode steps of 2 ms: the engine emitted tokens at least ~2 ms apart.
	assert.GreaterOrEqual(t, r.EmitNS[10]-r.EmitNS[1], int64(9*2*time.Millisecond)-int64(time.Millisecond))
}

func TestClientGoneFreesSlot(t *testing.T) {
	m := fastModel("m")
	m.DecodeBaseMs = 10
	s := newTestSim(t, m)
	resp := s.post("/v1/chat/completions", chatBody("bye", 1000, `"stream":true`), "X-Request-Id", "gone")
	buf := make([]byte, 512)
	_, err := resp.Body.Read(buf)
	require.NoError(t, err)
	resp.Body.Close() // hang up mid-stream
	require.Eventually(t, func() bool {
		_, body := s.get("/metrics")
		return strings.Contains(string(body), `llmsim_requests_total{model="m",outcome="canceled"} 1`) &&
			strings.Contains(string(body), `llmsim_requests_running{model="m"} 0`)
	}, 5*time.Second, 10*time.Millisecond)
}

func TestCloseEndsStreamsWithAnError(t *testing.T) {
	m := fastModel("m")
	m.DecodeBaseMs = 10
	s := newTestSim(t, m)
	resp := s.post("/v1/chat/completions", chatBody("long", 100000, `"stream":true`))
	defer resp.Body.Close()
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = s.srv.Close()
	}()
	evs, err := readSSE(resp.Body)
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(evs), 3)
	c, _ := parseChunk(t, evs[len(evs)-2].data)
	require.NotNil(t, c.Error)
	assert.Contains(t, c.Error.Message, "shutting down")
	assert.Equal(t, "[DONE]", evs[len(evs)-1].data)
	// New requests are refused while closed.
	resp2 := s.post("/v1/chat/completions", chatBody("x", 1, ""))
	resp2.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp2.StatusCode)
}

func TestTokensPerStepBundlesTokensInOneChunk(t *testing.T) {
	m := fastModel("m")
	m.TokensPerStep = 4
	s := newTestSim(t, m)
	resp := s.post("/v1/chat/completions", chatBody("bundle", 10, `"stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true}`))
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	var sizes, running []int
	for _, ev := range evs[1 : len(evs)-3] { // content chunks only
		c, _ := parseChunk(t, ev.data)
		sizes = append(sizes, countTokens(t, *c.Choices[0].Delta.Content))
		running = append(running, c.Usage.CompletionTokens)
	}
	assert.Equal(t, []int{4, 4, 2}, sizes)
	assert.Equal(t, []int{4, 8, 10}, running)
}
