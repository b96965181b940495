package report

import (
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// reachOf counts o's requests (each attempt, each reconnection of a stream)
// by whether they can have reached the server. A reconnection's earlier
// request went out and its stream broke: whether the server counted it is
// not known, so it is unanswered.
func reachOf(o *Observation) runrecord.ServerReach {
	var r runrecord.ServerReach
	if len(o.Attempts) == 0 {
		countRequest(&r, o.Result)
		return r
	}
	for _, a := range o.Attempts {
		if a.Result != nil {
			countRequest(&r, a.Result)
		}
		r.Unanswered += uint64(max(a.Reconnects, 0)) //nolint:gosec // not negative
	}
	return r
}

// countRequest counts one request by what came back: a 2xx (or an answer,
// which needs one), another status, nothing after it went out, or nothing
// because it never went out.
func countRequest(r *runrecord.ServerReach, res *stream.Result) {
	switch {
	case res.OK || (res.Status >= 200 && res.Status < 300):
		r.Answered++
	case res.Status != 0:
		r.Refused++
	case res.Sent:
		r.Unanswered++
	default:
		r.NotSent++
	}
}
