package stream

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// TestAHostileStreamFailsOneCallNotTheRun: one event of millions of '['
// (within a large maxEventSize) is a decode failure of that call, in
// bounded stack, and the next call goes on. The stack limit is lowered so
// that a validator recursing once per level dies at once instead of
// growing a goroutine's stack towards Go's 1 GB default first.
func TestAHostileStreamFailsOneCallNotTheRun(t *testing.T) {
	old := debug.SetMaxStack(64 << 20)
	t.Cleanup(func() { debug.SetMaxStack(old) })
	for _, name := range protocol.Names() {
		spec, err := protocol.Lookup(name)
		require.NoError(t, err)
		if name == "sse" {
			continue // raw SSE: the data is not JSON, nothing is parsed
		}
		t.Run(name, func(t *testing.T) {
			hostile := strings.Repeat("[", 4<<20)
			if spec.Framing == protocol.FramingSSE {
				hostile = "data: " + hostile + "\n\n"
			} else {
				hostile += "\n"
			}
			normal, err := filepath.Glob(filepath.Join("..", "..", "testdata", "protocols", name, "*normal.txt"))
			require.NoError(t, err)
			require.NotEmpty(t, normal)
			good, err := os.ReadFile(normal[0])
			require.NoError(t, err)
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if spec.Framing == protocol.FramingSSE {
					w.Header().Set("Content-Type", "text/event-stream")
				} else {
					w.Header().Set("Content-Type", "application/x-ndjson")
				}
				if calls.Add(1) == 1 {
					_, _ = w.Write([]byte(hostile))
					return
				}
				_, _ = w.Write(good)
			}))
			t.Cleanup(srv.Close)
			call := func() *Result {
				c := NewCall(Config{Spec: spec, MaxEventSize: 16 << 20}, time.Now())
				resp, err := srv.Client().Get(srv.URL)
				require.NoError(t, err)
				defer resp.Body.Close()
				c.Respond(resp, time.Now())
				if err := c.Read(resp.Body); err != nil {
					c.Fail(Classify(err, nil), err.Error())
				}
				return c.Finish()
			}
			r := call()
			require.False(t, r.OK)
			assert.Equal(t, ErrDecode, r.Err.Type)
			assert.Contains(t, r.Err.Message, "nested too deeply")
			assert.Less(t, len(r.Err.Message), 1000, "the message quotes an excerpt, not the event")
			r = call()
			require.True(t, r.OK, "the next call goes on: %+v", r.Err)
		})
	}
}
