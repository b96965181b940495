package report

import (
	"fmt"
	"math"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// The server's count of finished requests is held against the client's
// requests that can have reached it, like with like: a request refused at
// connect never reached it, one answered with a 2xx did (the server counts
// it when it ends it, a request the client cut short included), and one
// answered with an error status or sent without an answer may or may not
// be in its count. The count is checked only over a window that spans the
// whole test and holds no restart of the counter: across a restart, what
// the server finished between the last scrape and the restart is lost, and
// the pieces add up to less than it did.

// The thresholds of the count rule.
const (
	// countMismatchShare: the server counted this much more or fewer
	// requests or prompt tokens than the client sent (and at least
	// countMismatchMin requests): another tenant, a gateway retrying, or a
	// cache in front answering for it.
	countMismatchShare = 0.02
	countMismatchMin   = 2
)

// countCheck is one server window's count against the client's requests.
type countCheck struct {
	finished float64               // the server's Δ finished requests
	reach    runrecord.ServerReach // the client's requests, by whether they reached it
	excluded uint64                // of them, calls the report left out
	// skipped says why the counts were not compared ("" when they were);
	// evidence is the mismatch, when they were and disagree.
	skipped  string
	evidence []string
}

// checkCount compares w's finished requests with reach. known is false when
// there is nothing to compare (the server does not count finished
// requests, or the client sent nothing): no line, no finding.
func checkCount(v servermetrics.View, w *servermetrics.Window, reach runrecord.ServerReach, excluded uint64) (countCheck, bool) {
	if w == nil {
		return countCheck{}, false
	}
	n, ok := w.Counters[servermetrics.RequestsFinished]
	if !ok || reach.Total() == 0 {
		return countCheck{}, false
	}
	c := countCheck{finished: n, reach: reach, excluded: excluded}
	switch {
	case w.Resets[servermetrics.RequestsFinished] > 0:
		c.skipped = "the server's count began again from 0 during the run (a restart): what it finished between the last scrape and the restart is not in it"
	case v.Partial != "":
		c.skipped = "the server's window does not span the run: " + v.Partial
	case v.SpreadOver > 1:
		c.skipped = fmt.Sprintf("the client's requests are spread over %d endpoints that each count their own share", v.SpreadOver)
	}
	if c.skipped != "" {
		return c, true
	}
	lo, hi := reach.Bounds()
	switch d := n - float64(hi); {
	case outOfTolerance(d, hi):
		c.evidence = append(c.evidence, fmt.Sprintf("the server finished %.0f requests, %.0f more than the %d the client sent it (%s%s)",
			n, d, hi, reach, c.excludedNote()))
	case outOfTolerance(float64(lo)-n, lo):
		c.evidence = append(c.evidence, fmt.Sprintf("the server finished %.0f requests, %.0f fewer than the %d it answered with a 2xx (%s%s)",
			n, float64(lo)-n, lo, reach, c.excludedNote()))
	}
	return c, true
}

// outOfTolerance: a difference of d requests against a count of n is past
// what a scrape's timing explains (countMismatchMin requests and
// countMismatchShare of the count).
func outOfTolerance(d float64, n uint64) bool {
	return d >= countMismatchMin && d > countMismatchShare*float64(n)
}

func (c countCheck) excludedNote() string {
	if c.excluded == 0 {
		return ""
	}
	return fmt.Sprintf("; %d of the calls left out of the report", c.excluded)
}

// line is the check in one line, for the server section: what was
// compared and how it came out, or why it was not.
func (c countCheck) line() string {
	head := fmt.Sprintf("requests: the server finished %.0f; the client's: %s%s", c.finished, c.reach, c.excludedNote())
	switch {
	case c.skipped != "":
		return head + " — not compared: " + c.skipped
	case len(c.evidence) > 0:
		return head + " — they disagree (server_count_mismatch)"
	}
	return head + " — consistent"
}

// serverCount is a view's count check against its client's requests (the
// calls the report left out included: the server counted them too).
func serverCount(r *Run, v servermetrics.View) (countCheck, bool) {
	run := serverRun(r, v)
	if run == nil {
		return countCheck{}, false
	}
	reach := run.Category(runrecord.AllCategories).Reach
	reach.Add(run.Excluded.Reach)
	return checkCount(v, v.Run, reach, run.Excluded.Calls)
}

// countEvidence is the mismatch of a view's count with run's requests (none
// when they agree or could not be compared), with the prompt tokens when
// every call counted its usage.
func countEvidence(run *Run, v servermetrics.View) []string {
	if run == nil || v.Run == nil {
		return nil
	}
	all := run.Category(runrecord.AllCategories)
	reach := all.Reach
	reach.Add(run.Excluded.Reach)
	c, ok := checkCount(v, v.Run, reach, run.Excluded.Calls)
	if ok && c.skipped != "" {
		return nil
	}
	ev := c.evidence
	// Prompt tokens only when every call counted its usage (a failed call's
	// is unknown), over a window that spans the run without a restart.
	w := v.Run
	if n, ok := w.Counters[servermetrics.PromptTokens]; ok && all.PromptTokens > 0 && all.Failures == 0 && run.Excluded.Calls == 0 &&
		v.Partial == "" && w.Resets[servermetrics.PromptTokens] == 0 {
		sent := float64(all.PromptTokens)
		if d := n - sent; math.Abs(d) > countMismatchShare*sent {
			ev = append(ev, fmt.Sprintf("the server counted %.0f prompt tokens, the client's usage %d (%+.1f%%)", n, all.PromptTokens, 100*d/sent))
		}
	}
	return ev
}

// mergedCountFindings is server_count_mismatch on a merged record: every
// instance scraped the whole server, so only the whole test's requests (the
// instances' together) can be held against its count. One endpoint only:
// with several, which calls went to which is not in the record. A record
// without the requests' reach (an older one) is not checked.
func mergedCountFindings(rec *runrecord.Record) []runrecord.Finding {
	all := rec.Categories[runrecord.AllCategories]
	if len(rec.Server) != 1 || rec.Server[0].Run == nil || all == nil || all.Tallies == nil {
		return nil
	}
	reach, excluded := all.Tallies.Reach, uint64(0)
	if ex := rec.Excluded; ex != nil {
		reach.Add(ex.Reach)
		excluded = ex.Calls
	}
	if c, ok := checkCount(rec.Server[0], rec.Server[0].Run, reach, excluded); ok && len(c.evidence) > 0 {
		return []runrecord.Finding{countMismatchFinding(c.evidence, "")}
	}
	return nil
}

// countMismatchFinding is server_count_mismatch with its evidence.
func countMismatchFinding(ev []string, client string) runrecord.Finding {
	return runrecord.Finding{
		ID: "server_count_mismatch", Title: "The server counted other work than the client sent", Severity: "warning",
		Evidence: ev, Client: client,
		Advice: "More means someone else used the server during the run (another tenant, a health check that generates, " +
			"a gateway retrying); fewer means something in front answered or dropped calls (a cache, a gateway), or the " +
			"endpoint is another replica's. Server figures of this run mix that traffic in. " + guideLink("server_count_mismatch"),
	}
}
