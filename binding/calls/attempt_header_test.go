package calls

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/tracectx"
)

// An attempt sends the call's shared headers as they are when nothing
// changes them on the way, and a copy of its own when it adds a
// traceparent, a Last-Event-ID or the VU's cookies, or when k6 would delete a
// Content-Length from them: the shared map is never written.
func TestAttemptHeaderCopiesOnlyWhatChanges(t *testing.T) {
	t.Parallel()
	shared := http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer k"}}
	r := &request{header: shared}
	h := r.attemptHeader("", false)
	require.Equal(t, shared, h)
	h.Set("X-Probe", "1") // the very map, not a copy
	require.Equal(t, "1", shared.Get("X-Probe"))
	shared.Del("X-Probe")

	h = r.attemptHeader("ev-7", false)
	require.Equal(t, "ev-7", h.Get("Last-Event-ID"))
	require.Empty(t, shared.Get("Last-Event-ID"))

	gen, err := tracectx.NewGenerator(1)
	require.NoError(t, err)
	r.trace = &requestTrace{gen: gen, ctx: gen.Next()}
	h = r.attemptHeader("", false)
	require.NotEmpty(t, h.Get(tracectx.Header))
	require.Empty(t, shared.Get(tracectx.Header))

	r.trace = nil
	h = r.attemptHeader("", true) // the VU's cookies go on
	h.Add("Cookie", "route=a")
	require.Empty(t, shared.Get("Cookie"))

	withLength := http.Header{"Content-Length": {"5"}}
	r = &request{header: withLength}
	h = r.attemptHeader("", false)
	h.Del("Content-Length") // as k6's request path does
	require.Equal(t, "5", withLength.Get("Content-Length"))
}
