package stream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// fixturesDir holds one directory per protocol; each <case>.txt is a response
// body as it comes off the wire and <case>.expected.json what reading it must give.
const fixturesDir = "../../testdata/protocols"

// expectation is the <case>.expected.json schema. Pointers and omitted fields
// are still compared: absent means "none" (no tool calls, no usage…).
type expectation struct {
	Text          string             `json:"text"`
	Reasoning     string             `json:"reasoning"`
	ToolCalls     []ToolCall         `json:"toolCalls"`
	Usage         *protocol.Usage    `json:"usage"`
	FinishReason  string             `json:"finishReason"`
	Error         ErrorType          `json:"error"`         // "" = OK
	ErrorContains string             `json:"errorContains"` // the provider's message must survive
	Chunks        int                `json:"chunks"`
	OutputTokens  int64              `json:"outputTokens"`
	TokenSource   string             `json:"tokenSource"`
	ServerTimings map[string]float64 `json:"serverTimings"`
	Model         string             `json:"model"`
	// Thoughts are the signed reasoning; ResponseID the answer's id.
	Thoughts   []wantThought `json:"thoughts"`
	ResponseID string        `json:"responseId"`
	// Choices are the answers of a call that asked for several (n > 1).
	Choices []wantChoice `json:"choices"`
	// CountTokens gives the call a tokenizer: "words" counts whitespace-separated
	// words, a rule simple enough to count by hand in a fixture.
	CountTokens string `json:"countTokens"`
	// FinishSource, FinishOmitted and Cache are always compared: how the
	// finish is known and what the server said of its cache.
	FinishSource  string `json:"finishSource"`
	FinishOmitted bool   `json:"finishOmitted"`
	Cache         string `json:"cache"`
	// MaxTokens and RequireFinishReason are the call's: the request's output
	// limit and the strict end rule.
	MaxTokens           int64 `json:"maxTokens"`
	RequireFinishReason bool  `json:"requireFinishReason"`
}

type wantThought struct {
	Kind      string `json:"kind"`
	Call      int    `json:"call"`
	Text      string `json:"text"`
	Signature string `json:"signature"`
}

type wantChoice struct {
	Text         string `json:"text"`
	FinishReason string `json:"finishReason"`
}

type fixture struct {
	protocol, name string
	body           []byte
	want           expectation
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fixturesDir, "*", "*.txt"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	out := make([]fixture, 0, len(paths))
	for _, p := range paths {
		body, err := os.ReadFile(p)
		require.NoError(t, err)
		raw, err := os.ReadFile(strings.TrimSuffix(p, ".txt") + ".expected.json")
		require.NoError(t, err, "every fixture needs its expected result")
		var want expectation
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&want), p)
		out = append(out, fixture{
			protocol: filepath.Base(filepath.Dir(p)),
			name:     strings.TrimSuffix(filepath.Base(p), ".txt"),
			body:     body,
			want:     want,
		})
	}
	return out
}

func wordCount(s string) int { return len(strings.Fields(s)) }

// lineSplitReader returns the body in reads that end right after every CR and
// every LF, so a CRLF arrives in two reads: the framing must keep the CR state
// across reads instead of seeing an extra empty line.
type lineSplitReader struct{ rest []byte }

func (r *lineSplitReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	n := bytes.IndexAny(r.rest, "\r\n") + 1
	if n == 0 || n > len(p) {
		n = min(len(r.rest), len(p))
	}
	copy(p, r.rest[:n])
	r.rest = r.rest[n:]
	return n, nil
}

var readModes = map[string]func([]byte) io.Reader{ //nolint:gochecknoglobals // test table
	"whole":      func(b []byte) io.Reader { return bytes.NewReader(b) },
	"byte":       func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
	"line-split": func(b []byte) io.Reader { return &lineSplitReader{rest: b} },
}

func replay(t *testing.T, fx fixture, r io.Reader) *Result {
	t.Helper()
	spec, err := protocol.Lookup(fx.protocol)
	require.NoError(t, err)
	cfg := Config{Spec: spec, MaxTokens: fx.want.MaxTokens, RequireFinishReason: fx.want.RequireFinishReason}
	switch fx.want.CountTokens {
	case "":
	case "words":
		cfg.CountTokens = wordCount
	default:
		t.Fatalf("unknown countTokens %q", fx.want.CountTokens)
	}
	c := NewCall(cfg, time.Now())
	c.Headers = c.Start
	if err := c.Consume(r); err != nil {
		c.Fail(Classify(err, nil), err.Error())
	}
	return c.Finish()
}

func TestProtocolFixtures(t *testing.T) {
	t.Parallel()
	for _, fx := range loadFixtures(t) {
		for mode, reader := range readModes {
			t.Run(fx.protocol+"/"+fx.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				checkResult(t, fx.want, replay(t, fx, reader(fx.body)))
			})
		}
	}
}

func checkResult(t *testing.T, want expectation, got *Result) {
	t.Helper()
	if want.Error == "" {
		require.Nil(t, got.Err, "unexpected failure")
		assert.True(t, got.OK)
	} else {
		require.NotNil(t, got.Err, "expected a %s failure", want.Error)
		assert.False(t, got.OK)
		assert.Equal(t, want.Error, got.Err.Type, got.Err.Message)
		assert.Contains(t, got.Err.Message, want.ErrorContains)
	}
	assert.Equal(t, want.Text, got.Text, "text")
	assert.Equal(t, want.Reasoning, got.Reasoning, "reasoning")
	assert.Equal(t, want.ToolCalls, got.ToolCalls, "tool calls")
	assert.Equal(t, want.Usage, got.Usage, "usage")
	assert.Equal(t, want.FinishReason, got.FinishReason, "finish reason")
	assert.Equal(t, want.Chunks, got.Chunks, "chunks (output events)")
	assert.Equal(t, want.OutputTokens, got.OutputTokens, "output tokens")
	assert.Equal(t, want.TokenSource, got.TokenSource, "token source")
	assert.Equal(t, want.ServerTimings, got.ServerTimings, "server timings")
	var choices []wantChoice
	for _, ch := range got.Choices {
		choices = append(choices, wantChoice{Text: ch.Text, FinishReason: ch.FinishReason})
	}
	assert.Equal(t, want.Choices, choices, "choices")
	assert.Equal(t, want.Model, got.Model, "model")
	var thoughts []wantThought
	for _, th := range got.Thoughts {
		thoughts = append(thoughts, wantThought{Kind: th.Kind, Call: th.Call, Text: th.Text, Signature: th.Signature})
	}
	assert.Equal(t, want.Thoughts, thoughts, "thoughts")
	assert.Equal(t, want.ResponseID, got.ResponseID, "response id")
	assert.Equal(t, want.FinishSource, got.FinishSource, "finish source")
	assert.Equal(t, want.FinishOmitted, got.FinishOmitted, "finish omitted")
	assert.Equal(t, want.Cache, got.Cache.String(), "cache")
	// Reasoning counts for llm_ttft, not for llm_ttft_answer.
	assert.Equal(t, got.Chunks > 0, got.TTFT.Known(), "TTFT is measured iff output arrived")
	hasAnswer := want.Text != "" || len(want.ToolCalls) > 0
	assert.Equal(t, hasAnswer, got.TTFTAnswer.Known(), "TTFT answer is measured iff an answer arrived")
}

// An event larger than MaxEventSize is a decode error, found without buffering
// the whole body: the limit holds memory to about one event.
func TestOversizedEventIsDecodeError(t *testing.T) {
	t.Parallel()
	const limit = 1 << 10
	huge := strings.Repeat("x", 64*limit)
	bodies := map[string]string{
		"openai-chat": `data: {"choices":[{"index":0,"delta":{"content":"` + huge + `"}}]}` + "\n\n",
		"ollama":      `{"message":{"content":"` + huge + `"},"done":false}` + "\n",
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			spec, err := protocol.Lookup(name)
			require.NoError(t, err)
			c := NewCall(Config{Spec: spec, MaxEventSize: limit}, time.Now())
			require.NoError(t, c.Consume(strings.NewReader(body)))
			r := c.Finish()
			require.NotNil(t, r.Err)
			assert.Equal(t, ErrDecode, r.Err.Type, r.Err.Message)
			assert.Zero(t, r.Chunks)
		})
	}
}

// A limit below the 4 KiB read buffer holds too, for both framings: an event
// of twice the limit fails, one under it passes. NDJSON lines up to 4 KiB
// used to pass any smaller limit (bufio.Scanner's limit is the larger of its
// max and its buffer's capacity).
func TestMaxEventSizeBelowTheReadBuffer(t *testing.T) {
	t.Parallel()
	const limit = 1 << 10
	bodies := map[string]func(content string) string{
		"openai-chat": func(s string) string {
			return `data: {"choices":[{"index":0,"delta":{"content":"` + s + `"}}]}` + "\n\n"
		},
		"ollama": func(s string) string { return `{"message":{"content":"` + s + `"},"done":false}` + "\n" },
	}
	for name, body := range bodies {
		for _, tc := range []struct {
			size int
			ok   bool
		}{{limit / 2, true}, {2 * limit, false}} {
			t.Run(fmt.Sprintf("%s/%d", name, tc.size), func(t *testing.T) {
				t.Parallel()
				spec, err := protocol.Lookup(name)
				require.NoError(t, err)
				c := NewCall(Config{Spec: spec, MaxEventSize: limit}, time.Now())
				require.NoError(t, c.Consume(strings.NewReader(body(strings.Repeat("x", tc.size)))))
				r := c.Finish()
				if tc.ok {
					assert.Equal(t, 1, r.Chunks, "an event under the limit is read")
					return
				}
				require.NotNil(t, r.Err, "an event of %d bytes passed a %d-byte limit", tc.size, limit)
				assert.Equal(t, ErrDecode, r.Err.Type, r.Err.Message)
			})
		}
	}
}

// The sse protocol is complete at a clean EOF only: a body cut by a read error
// is not a complete answer, whatever came before.
func TestRawSSECompleteOnlyAtCleanEOF(t *testing.T) {
	t.Parallel()
	spec, err := protocol.Lookup("sse")
	require.NoError(t, err)
	body := io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(io.ErrUnexpectedEOF))
	c := NewCall(Config{Spec: spec}, time.Now())
	err = c.Consume(body)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	c.Fail(Classify(err, nil), err.Error())
	r := c.Finish()
	assert.False(t, r.OK)
	assert.Equal(t, ErrNetwork, r.Err.Type)

	// Without the caller classifying the read error, Finish must still not call it complete.
	c = NewCall(Config{Spec: spec}, time.Now())
	body = io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(io.ErrUnexpectedEOF))
	require.Error(t, c.Consume(body))
	r = c.Finish()
	assert.False(t, r.OK)
	assert.Equal(t, ErrTruncated, r.Err.Type)
	assert.Equal(t, "a", r.Text)
}

// Other protocols are never complete at EOF alone.
func TestOnlyRawSSECompletesAtEOF(t *testing.T) {
	t.Parallel()
	for _, name := range protocol.Names() {
		spec, err := protocol.Lookup(name)
		require.NoError(t, err)
		assert.Equal(t, name == "sse", spec.CompleteAtEOF, name)
	}
}
