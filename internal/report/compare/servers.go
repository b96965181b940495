package compare

import (
	"math"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// The server gives means and counts, not samples: no confidence interval can
// be had, so a change counts only when it is large both relatively and in
// absolute terms, well beyond what run-to-run noise moves a mean over a run.
const (
	ServerMinEffect = 0.2 // ±20 %
	serverMinMS     = 10  // and 10 ms for a mean time
	serverMinQueue  = 1   // and one request for the waiting p95
	serverMinShare  = 0.1 // and 10 points for KV usage and the prefix hit ratio
)

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

// Servers sets every view of this run against the baseline's view of
// its endpoint, figure by figure; figures either side lacks are left out.
func Servers(cur, base []servermetrics.View) []runrecord.ServerChange {
	var out []runrecord.ServerChange
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
	if math.Abs(d) < floor || math.Abs(d) <= ServerMinEffect*math.Abs(was) {
		return runrecord.VerdictSame
	}
	if (d > 0) == higherIsWorse {
		return runrecord.VerdictWorse
	}
	return runrecord.VerdictBetter
}

func compareWindows(was, now *servermetrics.Window) []runrecord.ServerChange {
	var out []runrecord.ServerChange
	add := func(figure, unit string, b, c, floor float64, higherIsWorse bool) {
		out = append(out, runrecord.ServerChange{Figure: figure, Unit: unit, Baseline: b, Current: c, Verdict: judge(b, c, floor, higherIsWorse)})
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
