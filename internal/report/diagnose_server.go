package report

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// The thresholds of the server rules.
const (
	// serverQueueShare: the server's waiting queue was non-empty in more than
	// this share of a window's scrapes, ...
	serverQueueShare = 0.5
	// ... or its mean queue time was more than this share of its mean TTFT
	// and at least serverQueueMinMS (an engine that admits requests at its
	// step boundaries queues each one a fraction of a step: not a queue).
	serverQueueTTFTShare = 0.3
	serverQueueMinMS     = 50
	// kvPressureUsage is the KV-cache usage p95 past which new sequences
	// wait for blocks (or running ones are preempted).
	kvPressureUsage = 0.9
)

// clientWindow is the server window the client's figures cover: the run
// after the warm-up when the report left one out, else the run.
func clientWindow(v servermetrics.View) *servermetrics.Window {
	if v.Measured != nil {
		return v.Measured
	}
	return v.Run
}

func clientWindowName(v servermetrics.View) string {
	if v.Measured != nil {
		return "after warm-up"
	}
	return "run"
}

// ServerStageName names a load stage in the server view's windows.
func ServerStageName(st *Stage) string { return runrecord.FormatConc(st.Concurrency) + " " + st.Unit() }

// ttftSplit is a window's mean client TTFT taken apart with the server's
// means: what is not the server's (network, HTTP, gateway, client), its
// queue, its prefill, and the rest of its TTFT (tokenizing, scheduling).
type ttftSplit struct {
	client, server, outside   float64 // ms
	queue, prefill, scheduled float64 // ms; NaN when the server does not tell
}

func splitTTFT(g *Group, w *servermetrics.Window) (ttftSplit, bool) {
	sp := ttftSplit{queue: math.NaN(), prefill: math.NaN(), scheduled: math.NaN()}
	if g == nil || g.S(record.DistTTFT).Count() == 0 || w == nil {
		return sp, false
	}
	h, ok := w.Histograms[servermetrics.TTFT]
	if !ok || h.Mean == nil {
		return sp, false
	}
	sp.client, sp.server = g.S(record.DistTTFT).Mean(), *h.Mean*1e3
	sp.outside = sp.client - sp.server
	if q, ok := w.Histograms[servermetrics.Queue]; ok && q.Mean != nil {
		sp.queue = *q.Mean * 1e3
	}
	if p, ok := w.Histograms[servermetrics.Prefill]; ok && p.Mean != nil {
		sp.prefill = *p.Mean * 1e3
	}
	if !math.IsNaN(sp.queue) && !math.IsNaN(sp.prefill) {
		sp.scheduled = sp.server - sp.queue - sp.prefill
	}
	return sp, true
}

func (sp ttftSplit) String() string {
	s := fmt.Sprintf("client TTFT mean %s = outside the server %s (network, HTTP, gateway, client: client − server TTFT) + server TTFT %s",
		fmtMS(sp.client), fmtMS(sp.outside), fmtMS(sp.server))
	if !math.IsNaN(sp.scheduled) {
		s += fmt.Sprintf(" (queue %s, prefill %s, tokenize/schedule %s)", fmtMS(sp.queue), fmtMS(sp.prefill), fmtMS(sp.scheduled))
	} else if !math.IsNaN(sp.queue) {
		s += fmt.Sprintf(" (of which queue %s)", fmtMS(sp.queue))
	}
	return s
}

// diagnoseServer adds the findings the server's figures support: its own
// queue (added to a client-side queue_bound, or one of its own), KV-cache
// pressure, and counts that disagree with what the client sent.
func diagnoseServer(r *Run, views []servermetrics.View, findings []runrecord.Finding) []runrecord.Finding {
	if r == nil {
		return findings
	}
	for _, v := range views {
		run := serverRun(r, v)
		client := ""
		if r.PerClient() {
			client = v.Client
		}
		windows := make([]*servermetrics.Window, 0, 1+len(v.Stages))
		if v.Run != nil {
			windows = append(windows, v.Run)
		}
		for i := range v.Stages {
			windows = append(windows, &v.Stages[i])
		}
		if ev := serverQueueEvidence(v, windows); len(ev) > 0 {
			i := slices.IndexFunc(findings, func(f runrecord.Finding) bool { return f.ID == "queue_bound" && f.Client == client })
			if i >= 0 {
				findings[i].Evidence = append(findings[i].Evidence, ev...)
			} else {
				findings = append(findings, runrecord.Finding{
					ID: "queue_bound", Title: "Queue-bound: the server's own queue holds requests before it starts on them", Severity: "warning",
					Evidence: ev, Client: client,
					Advice: "Requests wait in the server's scheduler queue: it admits fewer at once than arrive. Raise its batch/" +
						"concurrency limit (vLLM --max-num-seqs, SGLang --max-running-requests) or add replicas; keep the " +
						"load below the knee. " + guideLink("queue_bound"),
				})
			}
		}
		if ev := kvEvidence(v, windows); len(ev) > 0 {
			findings = append(findings, runrecord.Finding{
				ID: "kv_pressure", Title: "KV-cache pressure: the server ran out of cache blocks", Severity: "warning",
				Evidence: ev, Client: client,
				Advice: "Running sequences filled the KV cache: new ones wait for blocks and running ones are preempted " +
					"(recomputed or swapped), so decode slows and TTFT grows. Shorten prompts or outputs, lower the " +
					"concurrency limit, raise gpu-memory-utilization, or use a larger accelerator. " + guideLink("kv_pressure"),
			})
		}
		findings = serverCacheEvidence(run, v, client, findings)
		// Clients of one server may not all name it: a count that matches the
		// whole run's is not another tenant's.
		if ev := countEvidence(run, v); len(ev) > 0 && (run == r || len(countEvidence(r, v)) > 0) {
			findings = append(findings, countMismatchFinding(ev, client))
		}
	}
	return findings
}

// serverCacheEvidence adds the server's own prefix-cache hit ratio to
// cache_busted when the client sent shared-prefix prompts: as more evidence
// when the client's usage already showed the misses, or as the finding when
// the client could not tell (no cached-token count in the usage) and the
// server found none of the tokens it looked up. A low but non-zero ratio
// alone says nothing: the share of a prompt its shared prefix is, which the
// ratio is in, is not known here.
func serverCacheEvidence(run *Run, v servermetrics.View, client string, findings []runrecord.Finding) []runrecord.Finding {
	if v.Run == nil || v.Run.PrefixHitRatio == nil {
		return findings
	}
	var shared, known uint64
	for _, cat := range run.Categories() {
		g := run.Category(cat)
		shared += g.SharedPrefix
		known += g.SharedHit + g.SharedMiss
	}
	if shared < cacheMinKnown {
		return findings
	}
	ratio := *v.Run.PrefixHitRatio
	ev := fmt.Sprintf("server %s over the run: %s of the prompt tokens it looked up were in its prefix cache (Δhits/Δqueries), "+
		"with %d shared-prefix calls", v.Endpoint, fmtPct(ratio), shared)
	if i := slices.IndexFunc(findings, func(f runrecord.Finding) bool { return f.ID == "cache_busted" && f.Client == client }); i >= 0 {
		findings[i].Evidence = append(findings[i].Evidence, ev)
		return findings
	}
	if known >= cacheMinKnown || ratio > 0 {
		return findings
	}
	return append(findings, runrecord.Finding{
		ID: "cache_busted", Title: "Cache busted: the server's prefix cache found none of the shared prefixes", Severity: "warning",
		Evidence: []string{ev}, Client: client,
		Advice: "Something makes the prefix differ between calls: a timestamp, request id or random field early in the " +
			"prompt, a different system prompt, or routing to replicas that do not share a cache. " + guideLink("cache_busted"),
	})
}

func windowLabel(w *servermetrics.Window) string {
	if w.Name == "" {
		return "over the run"
	}
	return "at " + w.Name
}

func serverQueueEvidence(v servermetrics.View, windows []*servermetrics.Window) []string {
	var ev []string
	for _, w := range windows {
		g, ok := w.Gauges[servermetrics.RequestsWaiting]
		if !ok {
			continue
		}
		ttft, q := w.Histograms[servermetrics.TTFT], w.Histograms[servermetrics.Queue]
		byTime := ttft.Mean != nil && q.Mean != nil && *ttft.Mean > 0 && *q.Mean > serverQueueTTFTShare**ttft.Mean &&
			*q.Mean*1e3 >= serverQueueMinMS
		if g.AboveZero <= serverQueueShare && !byTime {
			continue
		}
		e := fmt.Sprintf("server %s %s: requests waiting > 0 in %s of %d scrapes (mean %.1f, max %.0f)",
			v.Endpoint, windowLabel(w), fmtPct(g.AboveZero), g.Samples, g.Mean, g.Max)
		if q.Mean != nil {
			e += fmt.Sprintf("; queue time mean %s", fmtMS(*q.Mean*1e3))
			if ttft.Mean != nil && *ttft.Mean > 0 {
				e += fmt.Sprintf(" = %s of its TTFT mean %s", fmtPct(*q.Mean / *ttft.Mean), fmtMS(*ttft.Mean*1e3))
			}
		}
		ev = append(ev, e)
	}
	return ev
}

func kvEvidence(v servermetrics.View, windows []*servermetrics.Window) []string {
	var ev []string
	for _, w := range windows {
		var parts []string
		if g, ok := w.Gauges[servermetrics.KVCacheUsage]; ok && g.P95 > kvPressureUsage {
			parts = append(parts, fmt.Sprintf("KV-cache usage p95 %s (max %s)", fmtPct(g.P95), fmtPct(g.Max)))
		}
		if p, ok := w.Counters[servermetrics.Preemptions]; ok && p > 0 {
			parts = append(parts, fmt.Sprintf("%.0f preemptions", p))
		}
		if len(parts) > 0 {
			ev = append(ev, fmt.Sprintf("server %s %s: %s", v.Endpoint, windowLabel(w), strings.Join(parts, ", ")))
		}
	}
	return ev
}

// PartialSegment says whether a run was one execution segment of a test,
// not all of it: a server's counts then hold every instance's calls.
func PartialSegment(info *runrecord.RunInfo) bool {
	if info == nil || info.Segment == "" {
		return false
	}
	s, err := parseSegment(info.Segment)
	return err == nil && (s.from.Sign() != 0 || s.to.Cmp(big.NewRat(1, 1)) != 0)
}
