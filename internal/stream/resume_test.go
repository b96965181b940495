package stream

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

func TestRetryScannerFindsRetryFieldsAcrossSplits(t *testing.T) {
	t.Parallel()
	input := "data: x\r\nretry: 250\r\n\r\n:comment retry: 9\nxretry: 7\nretry:12a\nretry:\n" +
		"id: 3\rretry:40\r\r"
	for split := 1; split <= len(input); split++ {
		var got []time.Duration
		s := newRetryScanner(func(d time.Duration) { got = append(got, d) })
		for i := 0; i < len(input); i += split {
			s.write([]byte(input[i:min(i+split, len(input))]))
		}
		require.Equal(t, []time.Duration{250 * time.Millisecond, 40 * time.Millisecond}, got, "split %d", split)
	}
}

func TestReopenedCallKeepsItsClock(t *testing.T) {
	t.Parallel()
	spec, err := protocol.Lookup("sse")
	require.NoError(t, err)
	c := NewCall(Config{Spec: spec}, time.Now())
	require.Error(t, c.Consume(&failingReader{r: strings.NewReader("retry: 30\nid: 1\ndata: a\n\n")}))
	c.Fail(ErrNetwork, "connection reset")
	require.Equal(t, "1", c.LastEventID())
	hint, ok := c.RetryHint()
	require.True(t, ok)
	require.Equal(t, 30*time.Millisecond, hint)

	c.Reopen()
	require.NoError(t, c.Consume(strings.NewReader("id: 2\ndata: b\n\n")))
	r := c.Finish()
	require.True(t, r.OK, "%v", r.Err)
	require.Equal(t, "ab", r.Text)
	require.Equal(t, 2, r.Chunks)
	require.Len(t, r.Gaps, 1)
	require.Equal(t, "2", c.LastEventID())
}

// failingReader returns its data, then a network-like error instead of EOF.
type failingReader struct{ r *strings.Reader }

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err != nil {
		return n, errReset
	}
	return n, nil
}

var errReset = errors.New("connection reset by peer")
