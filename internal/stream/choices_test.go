package stream

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

func readN2(t *testing.T, body string) *Result {
	t.Helper()
	spec, err := protocol.Lookup("openai-chat")
	require.NoError(t, err)
	c := NewCall(Config{Spec: spec}, time.Now())
	require.NoError(t, c.Consume(strings.NewReader(body)))
	return c.Finish()
}

// With n = 2 each answer has its own gap series: two pieces per choice give one
// gap per choice, not the three of the interleaved stream.
func TestChoicesHaveTheirOwnGaps(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(filepath.Join(fixturesDir, "openai-chat", "n2-logprobs.txt"))
	require.NoError(t, err)
	r := readN2(t, string(body))
	require.True(t, r.OK, "%v", r.Err)
	require.Len(t, r.Choices, 2)
	require.Len(t, r.Choices[0].Gaps, 1)
	require.Len(t, r.Choices[1].Gaps, 1)
	require.Len(t, r.Gaps, 2, "the call's gaps are each choice's in turn")
	require.Equal(t, "Yes.", r.Text)
	require.Equal(t, 4, r.Chunks)
}

// A choice that never finishes makes the call truncated when the stream ends
// without [DONE], even when another did: the stream was cut after the other
// answer's end. With [DONE] the call is complete and says that answer's
// finish is unknown, unless the strict rule is asked for.
func TestUnfinishedChoice(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(filepath.Join(fixturesDir, "openai-chat", "n2-logprobs.txt"))
	require.NoError(t, err)
	var kept []string
	for _, ev := range strings.Split(string(body), "\n\n") {
		if !strings.Contains(ev, `"index":1,"delta":{},"logprobs":null,"finish_reason":"stop"`) {
			kept = append(kept, ev)
		}
	}
	withDone := strings.Join(kept, "\n\n")
	require.Contains(t, withDone, "[DONE]")

	r := readN2(t, strings.ReplaceAll(withDone, "data: [DONE]", ""))
	require.False(t, r.OK)
	require.Equal(t, ErrTruncated, r.Err.Type)
	require.Contains(t, r.Err.Message, "choice 1")

	r = readN2(t, withDone)
	require.True(t, r.OK, "%v", r.Err)
	require.True(t, r.FinishOmitted)
	require.Equal(t, FinishFromServer, r.FinishSource, "the call's finish is the first answer's")
	require.Equal(t, FinishFromServer, r.Choices[0].FinishSource)
	require.Equal(t, FinishNone, r.Choices[1].FinishSource)
	require.Empty(t, r.Choices[1].FinishReason)

	spec, err := protocol.Lookup("openai-chat")
	require.NoError(t, err)
	c := NewCall(Config{Spec: spec, RequireFinishReason: true}, time.Now())
	require.NoError(t, c.Consume(strings.NewReader(withDone)))
	r = c.Finish()
	require.False(t, r.OK)
	require.Equal(t, ErrTruncated, r.Err.Type)
	require.Contains(t, r.Err.Message, "choice 1")
}

func TestChoiceIndexIsBounded(t *testing.T) {
	t.Parallel()
	r := readN2(t, `data: {"choices":[{"index":100000,"delta":{"content":"x"}}]}`+"\n\n")
	require.False(t, r.OK)
	require.Equal(t, ErrDecode, r.Err.Type)
}
