package stream

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// answerOf is an OpenAI chat stream of n tokens, "w0 " … "w(n-1) ".
func answerOf(n int) (body, text string) {
	var b, t strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"w%d \"}}]}\n\n", i)
		fmt.Fprintf(&t, "w%d ", i)
	}
	b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	return b.String(), t.String()
}

func readSized(t *testing.T, sizes *Sizes, body string) (*Call, *Result) {
	t.Helper()
	spec, err := protocol.Lookup("openai-chat")
	require.NoError(t, err)
	c := NewCall(Config{Spec: spec, Sizes: sizes}, time.Now())
	require.NoError(t, c.Consume(strings.NewReader(body)))
	return c, c.Finish()
}

// The second answer of a client gets its text and gaps allocated once, at the
// first answer's size, instead of doubling up to it.
func TestTheNextAnswerIsSizedLikeTheLast(t *testing.T) {
	t.Parallel()
	body, text := answerOf(150)
	var sizes Sizes
	_, first := readSized(t, &sizes, body)
	require.True(t, first.OK, "%v", first.Err)
	require.Equal(t, text, first.Text)
	require.Greater(t, cap(first.Gaps), 149, "grown by doubling")
	require.NotEqual(t, 149, cap(first.Gaps), "the first answer had nothing to learn from")

	c, second := readSized(t, &sizes, body)
	require.Equal(t, text, second.Text)
	require.Equal(t, len(text), c.text.Cap(), "the text was allocated once, at its final size")
	require.Len(t, second.Gaps, 149)
	require.Equal(t, 149, cap(second.Gaps), "the gaps were allocated once, at their final count")

	// A longer answer still grows as it needs; a shorter one is exact.
	longBody, longText := answerOf(400)
	_, long := readSized(t, &sizes, longBody)
	require.Equal(t, longText, long.Text)
	require.Len(t, long.Gaps, 399)
	shortBody, shortText := answerOf(3)
	_, short := readSized(t, &sizes, shortBody)
	require.Equal(t, shortText, short.Text)
	require.Len(t, short.Gaps, 2)
}

// Short and long answers mixed: the hint follows the short ones down at once
// and rises at most twofold a call, so a short answer never reserves what a
// long one needed.
func TestMixedAnswersDoNotReserveTheLongOnes(t *testing.T) {
	t.Parallel()
	longBody, _ := answerOf(2000)
	shortBody, _ := answerOf(20)
	var sizes Sizes
	readSized(t, &sizes, longBody)
	require.Equal(t, int32(1999), sizes.gaps.Load(), "the first answer is all there is to go by")
	readSized(t, &sizes, shortBody)
	require.Equal(t, int32(19), sizes.gaps.Load(), "down at once")
	readSized(t, &sizes, longBody)
	require.Equal(t, int32(38), sizes.gaps.Load(), "up twofold at most")
	c, _ := readSized(t, &sizes, shortBody)
	require.LessOrEqual(t, cap(c.gaps), 38, "the short answer reserved no more than twice its own")
}

// A call that brought no output teaches nothing: a failed call does not make
// the next one's reservation empty.
func TestACallWithoutOutputKeepsTheSizes(t *testing.T) {
	t.Parallel()
	body, _ := answerOf(20)
	var sizes Sizes
	readSized(t, &sizes, body)
	text, gaps := sizes.text.Load(), sizes.gaps.Load()
	require.Positive(t, text)
	require.Equal(t, int32(19), gaps)
	readSized(t, &sizes, "data: [DONE]\n\n")
	require.Equal(t, text, sizes.text.Load())
	require.Equal(t, gaps, sizes.gaps.Load())
}

// Sizes are bounded: one huge answer does not make every later call reserve
// as much.
func TestSizesAreBounded(t *testing.T) {
	t.Parallel()
	var sizes Sizes
	c := &Call{chunks: 1, gaps: make(Gaps, maxSizeHint+5)}
	c.text.WriteString(strings.Repeat("x", maxSizeHint+5))
	sizes.learn(c)
	require.Equal(t, int32(maxSizeHint), sizes.text.Load())
	require.Equal(t, int32(maxSizeHint), sizes.gaps.Load())
}
