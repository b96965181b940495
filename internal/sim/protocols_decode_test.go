package sim

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	clientproto "github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Every wire format llm-sim speaks is read back with the client's own decoder
// and call (internal/protocol + internal/stream): what k6 would measure must
// be what the engine did.

// wireCase is one protocol as a client calls it.
type wireCase struct {
	protocol string // the client's protocol name
	path     string
	body     func(prompt string, maxTokens int) string
	// finishLength is the finish reason the client reports when max tokens
	// was reached: each provider has its own word for it.
	finishLength string
	tokenSource  string
	// reportsCached: the format reports cached prompt tokens (Ollama's
	// prompt_eval_cached_count is not read by the client, TGI has none).
	reportsCached bool
	// promptExact: the format reports the prompt's token count.
	promptExact bool
	// noUsage: the format reports no counts and no finish reason (raw SSE).
	noUsage bool
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

var wireCases = []wireCase{ //nolint:gochecknoglobals // test table
	{
		protocol: "anthropic", path: "/v1/messages",
		body: func(p string, n int) string {
			return `{"model":"m","stream":true,"max_tokens":` + itoa(n) + `,"messages":[{"role":"user","content":` + jsonString(p) + `}]}`
		},
		finishLength: "max_tokens", tokenSource: stream.TokensFromStreamedUsage, reportsCached: true, promptExact: true,
	},
	{
		protocol: "openai-responses", path: "/v1/responses",
		body: func(p string, n int) string {
			return `{"model":"m","stream":true,"max_output_tokens":` + itoa(n) + `,"input":[{"role":"user","content":` + jsonString(p) + `}]}`
		},
		finishLength: "max_output_tokens", tokenSource: stream.TokensFromUsage, reportsCached: true, promptExact: true,
	},
	{
		protocol: "ollama", path: "/api/chat",
		body: func(p string, n int) string {
			return `{"model":"m","options":{"num_predict":` + itoa(n) + `},"messages":[{"role":"user","content":` + jsonString(p) + `}]}`
		},
		finishLength: "length", tokenSource: stream.TokensFromUsage, promptExact: true,
	},
	{
		protocol: "ollama", path: "/api/generate",
		body: func(p string, n int) string {
			return `{"model":"m","options":{"num_predict":` + itoa(n) + `},"prompt":` + jsonString(p) + `}`
		},
		finishLength: "length", tokenSource: stream.TokensFromUsage, promptExact: true,
	},
	{
		protocol: "gemini", path: "/v1beta/models/m:streamGenerateContent?alt=sse",
		body: func(p string, n int) string {
			return `{"contents":[{"role":"user","parts":[{"text":` + jsonString(p) + `}]}],"generationConfig":{"maxOutputTokens":` + itoa(n) + `}}`
		},
		finishLength: "MAX_TOKENS", tokenSource: stream.TokensFromStreamedUsage, reportsCached: true, promptExact: true,
	},
	{
		protocol: "tgi", path: "/generate_stream",
		body: func(p string, n int) string {
			return `{"inputs":` + jsonString(p) + `,"parameters":{"details":true,"max_new_tokens":` + itoa(n) + `}}`
		},
		finishLength: "length", tokenSource: stream.TokensFromUsage, promptExact: true,
	},
	{
		protocol: "llamacpp", path: "/completion",
		body: func(p string, n int) string {
			return `{"stream":true,"n_predict":` + itoa(n) + `,"prompt":` + jsonString(p) + `}`
		},
		finishLength: "limit", tokenSource: stream.TokensFromStreamedUsage, reportsCached: true, promptExact: true,
	},
	{
		protocol: "sse", path: "/v1/sim/events",
		body: func(p string, n int) string {
			return `{"max_tokens":` + itoa(n) + `,"prompt":` + jsonString(p) + `}`
		},
		tokenSource: stream.TokensFromTokenizer, noUsage: true,
	},
}

func wireCaseFor(t *testing.T, name string) wireCase {
	t.Helper()
	for _, c := range wireCases {
		if c.protocol+c.path == name || c.protocol == name {
			return c
		}
	}
	t.Fatalf("no wire case %q", name)
	return wireCase{}
}

// readWith reads resp with the client's decoder for protocolName, the way a
// k6 call does (the status is the caller's to check first).
func readWith(t *testing.T, protocolName string, resp *http.Response) *stream.Result {
	t.Helper()
	defer resp.Body.Close()
	spec, err := clientproto.Lookup(protocolName)
	require.NoError(t, err)
	c := stream.NewCall(stream.Config{Spec: spec, CountTokens: func(s string) int { return countTokens(t, s) }}, time.Now())
	c.Headers = time.Now()
	if err := c.Consume(resp.Body); err != nil {
		c.Fail(stream.Classify(err, nil), err.Error())
	}
	return c.Finish()
}

// longPrompt is several prefix-cache blocks long, so a repeat hits the cache.
const longPrompt = "The river runs past the old mill and the stone bridge, under the trees of the north bank, " +
	"where the town keeps its boats in winter and the children learn to swim in summer when the water is warm."

func TestEveryWireFormatReadsBackExactly(t *testing.T) {
	for _, wc := range wireCases {
		t.Run(wc.protocol+wc.path, func(t *testing.T) {
			s := newTestSim(t)
			const maxTokens = 23
			resp := s.post(wc.path, wc.body(longPrompt, maxTokens))
			require.Equal(t, http.StatusOK, resp.StatusCode)
			got := readWith(t, wc.protocol, resp)
			require.Nil(t, got.Err, "%+v", got.Err)
			assert.True(t, got.OK)
			assert.Equal(t, int64(maxTokens), got.OutputTokens)
			assert.Equal(t, wc.tokenSource, got.TokenSource)
			assert.Equal(t, maxTokens, countTokens(t, got.Text), "each word is one token: %q", got.Text)
			assert.Equal(t, wc.finishLength, got.FinishReason)
			ttft, ttftKnown := got.TTFT.Get()
			e2e, e2eKnown := got.E2E.Get()
			assert.True(t, ttftKnown && e2eKnown, "TTFT %v, E2E %v measured", ttftKnown, e2eKnown)
			assert.LessOrEqual(t, ttft, e2e)

			rec := s.trace.recordsN(t, 1)
			assert.Equal(t, OutcomeOK, rec[0].Outcome)
			assert.Equal(t, maxTokens, rec[0].CompletionTokens)
			if wc.noUsage {
				assert.Nil(t, got.Usage)
			} else {
				require.NotNil(t, got.Usage)
				assert.Equal(t, int64(maxTokens), got.Usage.CompletionTokens)
				assert.Zero(t, got.Usage.CachedTokens, "a first prompt is not cached")
			}
			if wc.promptExact {
				assert.Equal(t, int64(rec[0].PromptTokens), got.Usage.PromptTokens, "prompt tokens as the engine counted them")
			}

			// The same prompt again: the engine's prefix cache hits, and the
			// format says so.
			again := readWith(t, wc.protocol, s.post(wc.path, wc.body(longPrompt, maxTokens)))
			require.True(t, again.OK, "%+v", again.Err)
			assert.Equal(t, got.Text, again.Text, "the same question gets the same answer")
			rec = s.trace.recordsN(t, 2)
			require.Positive(t, rec[1].CachedTokens)
			if wc.reportsCached {
				require.NotNil(t, again.Usage)
				assert.Equal(t, int64(rec[1].CachedTokens), again.Usage.CachedTokens)
				if wc.promptExact {
					assert.Equal(t, int64(rec[1].PromptTokens), again.Usage.PromptTokens, "cached tokens are part of the prompt")
				}
			}
		})
	}
}

// A sampled length ends with the provider's "stop" word instead.
func TestEveryWireFormatReportsANaturalStop(t *testing.T) {
	for _, wc := range wireCases {
		t.Run(wc.protocol+wc.path, func(t *testing.T) {
			m := fastModel("m")
			m.OutputDist, m.OutputMinTokens, m.OutputMeanTokens = "uniform", 3, 5
			s := newTestSim(t, m)
			got := readWith(t, wc.protocol, s.post(wc.path, wc.body("stop early", 500)))
			require.True(t, got.OK, "%+v", got.Err)
			rec := s.trace.recordsN(t, 1)
			require.Equal(t, "stop", rec[0].FinishReason)
			if !wc.noUsage {
				assert.NotEqual(t, wc.finishLength, got.FinishReason)
				assert.NotEmpty(t, got.FinishReason)
			}
			assert.Equal(t, int64(rec[0].CompletionTokens), got.OutputTokens)
		})
	}
}

// Faults come out in each format's own shape, and the client classifies them.
func TestEveryWireFormatRendersFaults(t *testing.T) {
	for _, wc := range wireCases {
		t.Run(wc.protocol+wc.path, func(t *testing.T) {
			s := newTestSim(t)
			body := wc.body("faults", 10)

			got := readWith(t, wc.protocol, s.post(wc.path, body, FaultHeader, "error@4"))
			require.NotNil(t, got.Err)
			assert.Equal(t, stream.ErrStream, got.Err.Type, got.Err.Message)
			assert.Contains(t, got.Err.Message, "llm-sim fault: error after 4 tokens")
			assert.Equal(t, 4, countTokens(t, got.Text), "the tokens before the error arrived: %q", got.Text)

			got = readWith(t, wc.protocol, s.post(wc.path, body, FaultHeader, "malformed@2"))
			require.NotNil(t, got.Err)
			assert.Equal(t, stream.ErrDecode, got.Err.Type, got.Err.Message)

			got = readWith(t, wc.protocol, s.post(wc.path, body, FaultHeader, "disconnect@3"))
			require.NotNil(t, got.Err)
			assert.False(t, got.OK)

			resp := s.post(wc.path, body, FaultHeader, "status=503")
			resp.Body.Close()
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)

			sent := time.Now()
			got = readWith(t, wc.protocol, s.post(wc.path, body, FaultHeader, "stall=30@2"))
			require.True(t, got.OK, "%+v", got.Err)
			assert.GreaterOrEqual(t, time.Since(sent), 30*time.Millisecond, "the stall is in the stream")

			// A handler whose client went away writes its trace line when it notices.
			require.Eventually(t, func() bool { return len(s.trace.records(t)) == 5 }, 5*time.Second, 5*time.Millisecond)
			outcomes := map[Outcome]int{}
			for _, r := range s.trace.records(t) {
				outcomes[r.Outcome]++
			}
			// The client stops reading at the malformed event: the server may
			// see it go away before the stream's end.
			outcomes[OutcomeMalformed] += outcomes[OutcomeCanceled]
			delete(outcomes, OutcomeCanceled)
			assert.Equal(t, map[Outcome]int{OutcomeError: 1, OutcomeMalformed: 1, OutcomeDisconnect: 1, OutcomeStatus: 1, OutcomeOK: 1}, outcomes)
		})
	}
}

// Errors before the stream are in the format's own error shape.
func TestEveryWireFormatRejectsABadRequestInItsOwnShape(t *testing.T) {
	for _, wc := range wireCases {
		t.Run(wc.protocol+wc.path, func(t *testing.T) {
			s := newTestSim(t)
			resp := s.post(wc.path, `{not json`)
			defer resp.Body.Close()
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var v map[string]any
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
			assert.Contains(t, v, "error")
			assert.True(t, strings.Contains(string(mustJSON(v)), "invalid JSON body"), v)
		})
	}
}
