package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// ruleAllFailed: every call of the run (or of one client) failed.
func ruleAllFailed(r *Run) []runrecord.Finding {
	all := r.Category(runrecord.AllCategories)
	// Calls the test's stop cut in flight failed for the test, not the
	// service: a run stopped before any answer says so in its headline.
	if all.Requests == 0 || all.Failures < all.Requests || all.Errors[string(stream.ErrCanceled)] == all.Requests {
		return nil
	}
	types := make([]string, 0, len(all.Errors))
	for t := range all.Errors {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool {
		if all.Errors[types[i]] != all.Errors[types[j]] {
			return all.Errors[types[i]] > all.Errors[types[j]]
		}
		return types[i] < types[j]
	})
	how := "the same way, " + types[0]
	if len(types) > 1 {
		how = "as " + errorList(all.Errors)
	}
	msg := all.FirstError.Message
	if len(msg) > maxErrorMessage {
		msg = msg[:maxErrorMessage] + "…"
	}
	title := fmt.Sprintf("Every call failed (%d of %d) %s", all.Failures, all.Requests, how)
	if msg != "" {
		title += fmt.Sprintf(`: "%s"`, strings.TrimSpace(msg))
	}
	evidence := []string{fmt.Sprintf("errors: %s", errorList(all.Errors))}
	if all.FirstError.Type != "" {
		evidence = append(evidence, fmt.Sprintf("the first failure (%s): %s", all.FirstError.Type, orNone(msg)))
	}
	return []runrecord.Finding{{
		ID: "all_failed", Title: title, Severity: "warning", Evidence: evidence,
		Advice: "No call succeeded, so no latency or throughput figure could be measured. The error type and " +
			"message say where to look: the URL, key and model (http_4xx), the server (http_5xx, stream_error), " +
			"the network (network, timeout_*), or a stream the client judged incomplete (truncated); " +
			"result.error has each call's.",
		Values: map[string]float64{"failed": float64(all.Failures), "requests": float64(all.Requests)},
	}}
}

func orNone(s string) string {
	if s == "" {
		return "(no message)"
	}
	return s
}
