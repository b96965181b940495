package report

// The server's figures against the baseline's: a change the server's own
// /metrics show (its queue, prefill, decode, KV cache, throughput) is a change
// on the server's side, whatever the client's figures did, so a worse one is
// a finding of its own (server_regressed).

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// The server gives means and counts, not samples: no confidence interval can
// be had, so a change counts only when it is large both relatively and in
// absolute terms, well beyond what run-to-run noise moves a mean over a run.
const (
	serverMinEffect = 0.2 // ±20 %
	serverMinMS     = 10  // and 10 ms for a mean time
	serverMinQueue  = 1   // and one request for the waiting p95
	serverMinShare  = 0.1 // and 10 points for KV usage and the prefix hit ratio
)

// ServerChange is one server figure of this run against the baseline's view
// of the same endpoint. Baseline and Current are in Unit.
type ServerChange struct {
	Endpoint string  `json:"endpoint"`
	Client   string  `json:"client,omitempty"`
	Figure   string  `json:"figure"` // "queue mean", "requests_waiting p95", "finished per s", …
	Unit     string  `json:"unit"`   // "ms", "requests", "share", "per s", "per request"
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
	Verdict  string  `json:"verdict"` // VerdictBetter, VerdictWorse, VerdictSame
}

func (c ServerChange) String() string {
	f := func(v float64) string {
		switch c.Unit {
		case "ms":
			return fmtMS(v)
		case "share":
			return fmtPct(v)
		case "per s":
			return fmt.Sprintf("%.2f/s", v)
		default:
			return fmt.Sprintf("%.2f", v)
		}
	}
	return fmt.Sprintf("%s %s → %s", c.Figure, f(c.Baseline), f(c.Current))
}

// baselineView is the baseline's view of v's endpoint: the same endpoint, or
// the only one on each side (the server moved host between the runs).
func baselineView(v servermetrics.View, cur, base []servermetrics.View) *servermetrics.View {
	for i := range base {
		if base[i].Endpoint == v.Endpoint {
			return &base[i]
		}
	}
	if len(base) == 1 && len(cur) == 1 {
		return &base[0]
	}
	return nil
}

// compareServers sets every view of this run against the baseline's view of
// its endpoint, figure by figure; figures either side lacks are left out.
func compareServers(cur, base []servermetrics.View) []ServerChange {
	var out []ServerChange
	for _, v := range cur {
		b := baselineView(v, cur, base)
		if b == nil || b.Run == nil || v.Run == nil {
			continue
		}
		// Both after their warm-ups when both had one: the calls each
		// client's own comparison rows cover.
		was, now := b.Run, v.Run
		if b.Measured != nil && v.Measured != nil {
			was, now = b.Measured, v.Measured
		}
		for _, ch := range compareWindows(was, now) {
			ch.Endpoint, ch.Client = v.Endpoint, v.Client
			out = append(out, ch)
		}
	}
	return out
}

// judge says whether a figure moved for the worse (higherIsWorse: it grows
// when the server is worse), for the better, or not beyond the relative
// effect and the floor.
func judge(was, now, floor float64, higherIsWorse bool) string {
	d := now - was
	if math.Abs(d) < floor || math.Abs(d) <= serverMinEffect*math.Abs(was) {
		return VerdictSame
	}
	if (d > 0) == higherIsWorse {
		return VerdictWorse
	}
	return VerdictBetter
}

func compareWindows(was, now *servermetrics.Window) []ServerChange {
	var out []ServerChange
	add := func(figure, unit string, b, c, floor float64, higherIsWorse bool) {
		out = append(out, ServerChange{Figure: figure, Unit: unit, Baseline: b, Current: c, Verdict: judge(b, c, floor, higherIsWorse)})
	}
	for _, q := range []string{servermetrics.TTFT, servermetrics.Queue, servermetrics.Prefill, servermetrics.Decode} {
		b, c := was.Histograms[q], now.Histograms[q]
		if b.Mean != nil && c.Mean != nil {
			add(q+" mean", "ms", *b.Mean*1e3, *c.Mean*1e3, serverMinMS, true)
		}
	}
	if b, ok := was.Gauges[servermetrics.RequestsWaiting]; ok {
		if c, ok := now.Gauges[servermetrics.RequestsWaiting]; ok {
			add(servermetrics.RequestsWaiting+" p95", "requests", b.P95, c.P95, serverMinQueue, true)
		}
	}
	if b, ok := was.Gauges[servermetrics.KVCacheUsage]; ok {
		if c, ok := now.Gauges[servermetrics.KVCacheUsage]; ok {
			add(servermetrics.KVCacheUsage+" p95", "share", b.P95, c.P95, serverMinShare, true)
		}
	}
	// Preemptions per finished request: the runs may differ in length.
	perRequest := func(w *servermetrics.Window) (float64, bool) {
		p, ok := w.Counters[servermetrics.Preemptions]
		n, ok2 := w.Counters[servermetrics.RequestsFinished]
		return p / n, ok && ok2 && n > 0
	}
	if b, ok := perRequest(was); ok {
		if c, ok := perRequest(now); ok {
			add("preemptions per request", "per request", b, c, 0.01, true)
		}
	}
	rate := func(w *servermetrics.Window) (float64, bool) {
		n, ok := w.Counters[servermetrics.RequestsFinished]
		d := w.To.Sub(w.From).Seconds()
		return n / d, ok && d > 0
	}
	if b, ok := rate(was); ok {
		if c, ok := rate(now); ok {
			add("finished per s", "per s", b, c, 0, false)
		}
	}
	if was.PrefixHitRatio != nil && now.PrefixHitRatio != nil {
		add("prefix-cache hit ratio", "share", *was.PrefixHitRatio, *now.PrefixHitRatio, serverMinShare, false)
	}
	return out
}

// serverChangeFinding is server_regressed when a server figure got worse
// than the baseline's, one finding per client (or one for the run).
func serverChangeFinding(changes []ServerChange, findings []Finding) []Finding {
	byClient := map[string][]string{}
	var order []string
	for _, c := range changes {
		if c.Verdict != VerdictWorse {
			continue
		}
		if _, seen := byClient[c.Client]; !seen {
			order = append(order, c.Client)
		}
		byClient[c.Client] = append(byClient[c.Client], fmt.Sprintf("server %s against the baseline: %s", c.Endpoint, c))
	}
	for _, client := range order {
		findings = append(findings, Finding{
			ID: "server_regressed", Title: "The server is worse than in the baseline, by its own figures", Severity: "warning",
			Evidence: byClient[client], Client: client,
			Advice: "The server's own /metrics moved against the baseline run: the change is on the server's side (engine " +
				"version or flags, model, hardware, other traffic on it), not in the network or this client. Compare how " +
				"the two servers were set up; the client's own comparison rows say how much a user felt it. " + guideLink("server_regressed"),
		})
	}
	return findings
}

// serverChangesLine is the text report's line of a view's changes: every
// figure compared, the changed ones marked.
func serverChangesLine(v servermetrics.View, changes []ServerChange) string {
	var parts []string
	for _, c := range changes {
		if c.Endpoint != v.Endpoint || c.Client != v.Client {
			continue
		}
		s := c.String()
		if c.Verdict != VerdictSame {
			s += " (" + c.Verdict + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// changedServer is the changes that are not "no significant change".
func changedServer(changes []ServerChange) []ServerChange {
	var out []ServerChange
	for _, c := range changes {
		if c.Verdict != VerdictSame {
			out = append(out, c)
		}
	}
	return out
}

func (c ServerChange) label() string {
	if c.Client == "" {
		return c.Endpoint
	}
	return c.Client + " · " + c.Endpoint
}

// writeServerChangesText lists the server figures that changed against the
// baseline, under the comparison's heading.
func writeServerChangesText(b *strings.Builder, changes []ServerChange) {
	if len(changes) == 0 {
		return
	}
	changed := changedServer(changes)
	fmt.Fprintf(b, "\n  baseline, the server's own figures: %d of %d changed (≥%.0f%% and a floor; the server gives means, so no interval)\n",
		len(changed), len(changes), 100*serverMinEffect)
	for _, c := range changed {
		fmt.Fprintf(b, "    %-7s %s: %s\n", c.Verdict, c.label(), c)
	}
}

func writeServerChangesHTML(b *bytes.Buffer, changes []ServerChange) {
	rows := make([]verdictRow, len(changes))
	for i, c := range changes {
		rows[i] = verdictRow{c.label(), c.Figure, c.String(), c.Verdict}
	}
	writeVerdictTableHTML(b, "server-comparison", "server", rows)
}

// verdictRow is one compared figure of a baseline table: whose, which, how
// it changed, and the verdict.
type verdictRow struct{ label, figure, change, verdict string }

// writeVerdictTableHTML writes compared figures as a table, each verdict
// coloured; nothing without rows.
func writeVerdictTableHTML(b *bytes.Buffer, id, what string, rows []verdictRow) {
	if len(rows) == 0 {
		return
	}
	esc := html.EscapeString
	fmt.Fprintf(b, `<table id="%s"><tr><th>%s</th><th>figure</th><th>baseline → this run</th><th>verdict</th></tr>`, id, what)
	for _, r := range rows {
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td class=\"%s\">%s</td></tr>\n", esc(r.label), esc(r.figure), esc(r.change),
			verdictClass(r.verdict), r.verdict)
	}
	b.WriteString("</table>\n")
}

// verdictClass is the page's style class of a comparison verdict.
func verdictClass(verdict string) string {
	switch verdict {
	case VerdictWorse:
		return "worse"
	case VerdictBetter:
		return "better"
	}
	return "same"
}
