package report

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// A run whose every call failed the same way says so first, with the error
// type and the first failure's message, never "nothing stands out".
func TestEveryCallFailedTheSameWay(t *testing.T) {
	s := synth{seed: 1, stages: []synthStage{{12, 60}}}
	r := collectWith(s, func(i int, o *Observation) {
		o.OK = false
		msg := "stream ended with [DONE] but no finish reason"
		if i > 0 {
			msg = "a later failure"
		}
		o.Err = &stream.Error{Type: stream.ErrTruncated, Message: msg}
		if i == 0 {
			o.End = t0 // the first to end, whatever the order of the calls
		}
	})
	fs := Diagnose(r)
	require.Equal(t, []string{"all_failed"}, ids(fs))
	all := r.Category(runrecord.AllCategories)
	require.Contains(t, fs[0].Title, "Every call failed")
	require.Contains(t, fs[0].Title, "the same way, truncated")
	require.Contains(t, fs[0].Title, `"stream ended with [DONE] but no finish reason"`)
	require.Equal(t, float64(all.Requests), fs[0].Values["failed"])

	text := RenderText(r, fs, nil)
	require.NotContains(t, text, "nothing stands out")
	require.Contains(t, text, "[all_failed] Every call failed")
	require.Less(t, strings.Index(text, fs[0].Title), strings.Index(text, "requests"), "the headline comes before the tables")
}

// Failures of several kinds are listed; one success keeps the rule silent.
func TestEveryCallFailedSeveralWays(t *testing.T) {
	s := synth{seed: 3, stages: []synthStage{{8, 30}}}
	fail := func(i int, o *Observation) {
		o.OK = false
		o.Err = &stream.Error{Type: stream.ErrHTTP5xx, Message: "HTTP 503"}
		if i%3 == 0 {
			o.Err = &stream.Error{Type: stream.ErrTimeoutIdle, Message: "no event for 1s"}
		}
	}
	fs := Diagnose(collectWith(s, fail))
	require.Equal(t, []string{"all_failed"}, ids(fs))
	require.Contains(t, fs[0].Title, "as http_5xx:")
	require.Contains(t, fs[0].Title, "timeout_idle:")

	oneOK := collectWith(s, func(i int, o *Observation) {
		if i != 5 {
			fail(i, o)
		}
	})
	require.NotContains(t, ids(Diagnose(oneOK)), "all_failed")
}

func TestFirstErrorIsTheEarliest(t *testing.T) {
	a := FirstError{At: t0.Add(time.Second), Type: "network", Message: "a"}
	b := FirstError{At: t0, Type: "http_5xx", Message: "b"}
	require.Equal(t, b, a.earlier(b))
	require.Equal(t, b, b.earlier(a))
	require.Equal(t, a, FirstError{}.earlier(a))
	require.Equal(t, a, a.earlier(FirstError{}))
}
