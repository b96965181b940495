package report

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// The thresholds of the rules. They are deliberately coarse: a rule speaks
// only when the effect is large against sampling noise, so a healthy run stays
// silent. docs/guide.md explains each one.
const (
	// minSamples is how many calls stand behind a run-wide median a rule reads.
	// Rules that compare load stages use stageMinCalls and a significance test
	// instead (collect_significance.go, diagnose_stages.go): stages are short.
	minSamples = 50

	networkShareMedian = 0.4  // half the calls spend ≥ 40 % of TTFT before the server could answer
	connectShare       = 0.25 // or connection set-up is ≥ 25 % of all TTFT
	networkMinTTFTMS   = 20.0 // and TTFT P50 is worth saving: a share of a millisecond is no finding

	burstShareMin    = 0.4  // ≥ 40 % of gaps in bursts…
	burstShareMax    = 0.98 // …but not all of them (then there is no rhythm to see)
	longGapSpread    = 3.0  // the other gaps regular: P90/P10 ≤ 3
	longGapMinMS     = 20.0 // and well apart from the bursts
	minGapsForBuffer = 500

	clientParseShare = 0.10 // parsing > 10 % of E2E
	eventLagP95MS    = 100.0
	eventLagP50MS    = 20.0
	starvedMin       = 3 // calls with a late idle timer (the process was starved of CPU)
	// The process's own lag (scheduler latency, timer lateness) adds to every
	// timestamp. The limits sit above the lag of a load generator whose TTFT
	// error is still within 1.25x a bare Go client's (make accuracy keeps
	// them calibrated) and below a decode step, where a late timestamp
	// starts to move the TTFT and gap figures themselves.
	ClientLagP95MS = 20.0
	ClientLagP50MS = 10.0
	// A first token read together with the next one, which the server sent
	// a decode step later, is dated by it (stream.TTFTReadLate): its TTFT
	// is over by a decode step or more; a request that went out half a
	// decode step after t0, its connection's set-up left out
	// (stream.TTFTSentLate), carries that wait. Once one call in a hundred
	// is either, the TTFT P99 is the client's. Unlike the lag above these
	// are facts of each call, not estimates. One call in a hundred is the
	// share that moves a P99; make accuracy checks the rule against llm-sim's
	// trace, which dates every token on the server.
	LateTTFTShare = 0.01
	LateTTFTMin   = 3 // calls, so that one or two unlucky calls in a short run do not fire it

	cacheMinKnown = 30
	cacheHitMax   = 0.05

	holRatio    = 1.5
	holMinDelta = 50.0
	holBusy     = 0.5 // ≥ 0.5 long prefills in flight on average in the bucket
	holQuiet    = 0.1 // "none in flight": under 0.1 on average
	holMinSide  = 20

	stallShare = 0.01
	stallMin   = 3

	lengthSpread      = 2.0 // E2E P90/P10 ≥ 2…
	lengthCorrelation = 0.7 // …with rank correlation to output tokens ≥ 0.7…
	lengthTPOTShare   = 0.5 // …and the TPOT spread less than half of it
	lengthMinSamples  = 100

	driftRatio       = 1.3 // early and late medians differ by ×1.3…
	driftQuartile    = 1.1 // …and both quartiles moved the same way by ×1.1
	driftMinDuration = 60  // seconds of steady load
	driftMinBuckets  = 6
	driftMinSide     = 30
)

// Diagnose applies every rule to a run. A healthy run gets none. When the run
// had several clients every rule reads each client alone: two services mixed
// in one distribution would look like neither.
func Diagnose(r *Run) []runrecord.Finding {
	if r == nil {
		return nil
	}
	if !r.PerClient() {
		return diagnoseOne(r)
	}
	var out []runrecord.Finding
	for _, name := range r.Clients() {
		for _, f := range diagnoseOne(r.Client(name)) {
			f.Client = name
			f.Title = runrecord.ClientLabel(name) + ": " + f.Title
			out = append(out, f)
		}
	}
	return out
}

func diagnoseOne(r *Run) []runrecord.Finding {
	var out []runrecord.Finding
	for _, rule := range []func(*Run) []runrecord.Finding{
		ruleAllFailed, ruleLoadShape, ruleKnee, ruleNetwork, ruleGatewayBuffering, ruleClientBound, ruleGeneratorBehind,
		ruleCacheBusted, ruleHeadOfLine, ruleStalls, ruleLengthVariance, ruleDrift, ruleFinishOmitted,
	} {
		out = append(out, rule(r)...)
	}
	for i := range out {
		out[i].Advice += " " + guideLink(out[i].ID)
	}
	return out
}

// guideLink points a finding's advice at the section of the method guide that
// explains the cause and how to test for it (the guide keeps an anchor per id).
func guideLink(id string) string { return "See docs/guide.md#" + id }

// ruleNetwork flags TTFT dominated by what happens before the server answers.
func ruleNetwork(r *Run) []runrecord.Finding {
	all := r.Category(runrecord.AllCategories)
	share := all.S(record.DistNetworkShare)
	if share.Count() < minSamples {
		return nil
	}
	med := q50(share)
	conn := ratio(all.ConnectSumMS, all.ConnectTTFTSumMS)
	if !(med >= networkShareMedian || conn >= connectShare) || q50(all.S(record.DistTTFT)) < networkMinTTFTMS {
		return nil
	}
	reuse := ratio(float64(all.ReusedConns), float64(all.ReusedConns+all.NewConns))
	advice := "Most of TTFT is spent on the way to the server: run the load generator closer to the service " +
		"(same region, no extra proxy) or check the gateway in between."
	if conn >= connectShare {
		advice = "Connection set-up (dial + TLS) is a large part of TTFT: make sure connections are reused " +
			"(keep-alive, a connection pool, HTTP/2) and that nothing closes them between calls."
	}
	return []runrecord.Finding{{
		ID: "network_heavy", Title: "Network-heavy: much of TTFT passes before the server answers", Severity: "warning",
		Evidence: []string{
			fmt.Sprintf("median share of TTFT before response headers / connection set-up: %s (P90 %s)", fmtPct(med), fmtPct(share.Quantile(0.9))),
			fmt.Sprintf("connection set-up is %s of all TTFT; %s of calls reused a connection; connect P50 %s",
				fmtPct(conn), fmtPct(reuse), fmtMS(q50(all.S(record.DistConnect)))),
		},
		Advice: advice,
		Values: map[string]float64{"network_share_p50": med, "connect_share": conn, "reuse_rate": reuse},
	}}
}

// ruleGatewayBuffering looks for the pattern of a buffering hop: bursts of events with
// almost no gap, separated by regular long pauses.
func ruleGatewayBuffering(r *Run) []runrecord.Finding {
	all := r.Category(runrecord.AllCategories)
	gaps := all.S(record.DistGap)
	if all.GapCount < minGapsForBuffer || gaps.Count() < minGapsForBuffer {
		return nil
	}
	// The burst share is counted exactly per gap; the sketch only places the
	// long gaps that separate the bursts.
	nz := all.BurstShare()
	if nz < burstShareMin || nz > burstShareMax {
		return nil
	}
	p10 := gaps.Quantile(nz + (1-nz)*0.1)
	p50 := gaps.Quantile(nz + (1-nz)*0.5)
	p90 := gaps.Quantile(nz + (1-nz)*0.9)
	if p10 < longGapMinMS || p90/p10 > longGapSpread {
		return nil
	}
	perBurst := ratio(float64(all.BurstGaps+all.Bursts), float64(all.Bursts))
	return []runrecord.Finding{{
		ID: "gateway_buffering", Title: "Gateway buffering: tokens arrive in bursts at a regular rhythm", Severity: "warning",
		Evidence: []string{
			fmt.Sprintf("%s of %d inter-token gaps are under %s (events delivered together), %.1f events per burst on average",
				fmtPct(nz), all.GapCount, fmtMS(nearZeroGapMS), perBurst),
			fmt.Sprintf("the other gaps are regular: P10 %s, P50 %s, P90 %s", fmtMS(p10), fmtMS(p50), fmtMS(p90)),
		},
		Advice: "Something between the model and the client collects the stream into blocks: a proxy or API " +
			"gateway with response buffering (nginx proxy_buffering, X-Accel-Buffering: no, compression on event " +
			"streams). Compare with a direct connection; the users see the same stutter.",
		Values: map[string]float64{"burst_share": nz, "long_gap_p50_ms": p50, "events_per_burst": perBurst},
	}}
}

// LateTTFTsBound says whether the calls whose TTFT this process made late
// (first token read late, request sent late) among the judged make a run
// client-bound: at least LateTTFTMin of them, and at least LateTTFTShare of
// the judged. The report's rule, k6's warning while
// the test runs and the accuracy benchmark's verdict all ask it.
func LateTTFTsBound(late, judged uint64) bool {
	return late >= LateTTFTMin && float64(late) >= LateTTFTShare*float64(judged)
}

// ruleClientBound warns when the load generator itself is the bottleneck.
func ruleClientBound(r *Run) []runrecord.Finding {
	all := r.Category(runrecord.AllCategories)
	var ev []string
	vals := map[string]float64{}
	if all.S(record.DistClientParse).Count() >= minSamples {
		if sh := ratio(all.ParseSumMS, all.ParseE2ESumMS); sh >= clientParseShare {
			ev = append(ev, fmt.Sprintf("the client spent %s of end-to-end time parsing the streams (limit %s)", fmtPct(sh), fmtPct(clientParseShare)))
			vals["parse_share"] = sh
		}
	}
	if lag := all.S(record.DistEventLag); lag.Count() >= minSamples {
		p50, p95 := q50(lag), lag.Quantile(0.95)
		if p95 >= eventLagP95MS || p50 >= eventLagP50MS {
			ev = append(ev, fmt.Sprintf("JavaScript event callbacks ran late: P50 %s, P95 %s after the bytes arrived", fmtMS(p50), fmtMS(p95)))
			vals["event_lag_p95_ms"] = p95
		}
	}
	if lag := all.S(record.DistClientLag); lag.Count() >= minSamples {
		p50, p95 := q50(lag), lag.Quantile(0.95)
		if p95 >= ClientLagP95MS || p50 >= ClientLagP50MS {
			ev = append(ev, fmt.Sprintf("this process ran late while calls were in flight (Go scheduler latency and "+
				"timer lateness): P50 %s, P95 %s added to the timestamps it took", fmtMS(p50), fmtMS(p95)))
			vals["client_lag_p95_ms"] = p95
		}
	}
	if n, reads, sends := all.TTFTJudged, all.LateFirstReads, all.LateSends; LateTTFTsBound(reads+sends, n) {
		if reads > 0 {
			ev = append(ev, fmt.Sprintf("%d of %d calls (%s) read their first token together with the next one, which the "+
				"server sent a decode step later: the process was late just then, and those TTFTs are over by a decode "+
				"step or more", reads, n, fmtPct(float64(reads)/float64(n))))
		}
		if sends > 0 {
			ev = append(ev, fmt.Sprintf("%d of %d calls (%s) sent their request half a decode step or more after it was "+
				"made (a new connection's set-up left out): the process was busy, and those TTFTs carry the wait", sends, n,
				fmtPct(float64(sends)/float64(n))))
		}
		vals["late_first_read_share"] = float64(reads) / float64(n)
		vals["late_send_share"] = float64(sends) / float64(n)
	}
	if n := all.StarvedRequests; n >= starvedMin {
		ev = append(ev, fmt.Sprintf("%d calls had an idle timer fire over 50 ms late: this process, not the server, "+
			"was not running", n))
		vals["starved_calls"] = float64(n)
	}
	if len(ev) == 0 {
		return nil
	}
	return []runrecord.Finding{{
		ID: "client_bound", Title: "Client-bound: the load generator is a bottleneck — do not trust these latencies", Severity: "warning",
		Evidence: ev,
		Advice: "Give the load generator more CPU or fewer VUs per instance (distribute the test), drop per-event " +
			"callbacks and gap recording you do not need, and rerun. Streams that start together with answers of one " +
			"length end together, and the next calls' first tokens then arrive while the process is busy with the " +
			"last ones: mixed prompts or an arrival-rate executor spread them.",
		Values: vals,
	}}
}

// ruleCacheBusted: prompts built to share a prefix never hit the cache.
func ruleCacheBusted(r *Run) []runrecord.Finding {
	var ev []string
	var known, hits uint64
	for _, cat := range r.Categories() {
		g := r.Category(cat)
		k := g.SharedHit + g.SharedMiss
		if k == 0 {
			continue
		}
		known += k
		hits += g.SharedHit
		ev = append(ev, fmt.Sprintf("%s: %d of %d shared-prefix calls hit the cache", cat, g.SharedHit, k))
	}
	if known < cacheMinKnown || float64(hits)/float64(known) >= cacheHitMax {
		return nil
	}
	return []runrecord.Finding{{
		ID: "cache_busted", Title: "Cache busted: shared-prefix prompts do not hit the prefix cache", Severity: "warning",
		Evidence: ev,
		Advice: "Something makes the prefix differ between calls: a timestamp, request id or random field early " +
			"in the prompt, a different system prompt, or routing to replicas that do not share a cache. Also check " +
			"that the server caches and reports it (vLLM --enable-prefix-caching and --enable-prompt-tokens-details, " +
			"SGLang --enable-cache-report).",
		Values: map[string]float64{"hit_rate": float64(hits) / float64(known)},
	}}
}

// ruleHeadOfLine compares short-prompt TTFT in seconds with and without
// long-prompt prefill in flight, within each concurrency class so that plain
// load does not pass for blocking.
func ruleHeadOfLine(r *Run) []runrecord.Finding {
	tl := r.Timeline
	type sides struct{ busy, quiet *sketch.Sketch }
	byClass := map[int]*sides{}
	for i := range tl.Buckets {
		b := &tl.Buckets[i]
		if b.ShortTTFT == nil {
			continue
		}
		cl := b.ClassMax
		s := byClass[cl]
		if s == nil {
			s = &sides{sketch.New(sketch.CoarseAlpha), sketch.New(sketch.CoarseAlpha)}
			byClass[cl] = s
		}
		switch inflight := b.LongPrefill / tl.Width.Seconds(); {
		case inflight >= holBusy:
			_ = s.busy.Merge(b.ShortTTFT)
		case inflight < holQuiet:
			_ = s.quiet.Merge(b.ShortTTFT)
		}
	}
	var wsum, wratio float64
	var ev []string
	var classes []int
	for cl := range byClass {
		classes = append(classes, cl)
	}
	sort.Ints(classes)
	for _, cl := range classes {
		s := byClass[cl]
		if s.busy.Count() < holMinSide || s.quiet.Count() < holMinSide {
			continue
		}
		b, q := q50(s.busy), q50(s.quiet)
		w := float64(min(s.busy.Count(), s.quiet.Count()))
		if b-q >= holMinDelta {
			wratio += w * b / q
		} else {
			wratio += w * math.Min(b/q, holRatio-0.01) // a small shift must not count as blocking
		}
		wsum += w
		ev = append(ev, fmt.Sprintf("short-prompt TTFT P50 %s while long prompts were being prefilled vs %s when none were (n=%d/%d)",
			fmtMS(b), fmtMS(q), s.busy.Count(), s.quiet.Count()))
	}
	if wsum == 0 || wratio/wsum < holRatio {
		return nil
	}
	return []runrecord.Finding{{
		ID: "head_of_line", Title: "Long prompts block short ones", Severity: "warning",
		Evidence: ev,
		Advice: "Short requests wait behind the prefill of long ones in a shared queue. Enable chunked prefill " +
			"or a token budget per batch, route long-context traffic to its own replicas, or prioritise short requests.",
		Values: map[string]float64{"ttft_ratio": wratio / wsum},
	}}
}

// ruleStalls reports gaps long enough for a user to think the answer froze.
func ruleStalls(r *Run) []runrecord.Finding {
	all := r.Category(runrecord.AllCategories)
	if all.Requests == 0 || all.StalledRequests < stallMin || float64(all.StalledRequests)/float64(all.Requests) < stallShare {
		return nil
	}
	var ev []string
	for _, cat := range r.Categories() {
		g := r.Category(cat)
		if g.StalledRequests == 0 {
			continue
		}
		line := fmt.Sprintf("%s: %d of %d calls stalled (%d stalls)", cat, g.StalledRequests, g.Requests, g.Stalls)
		if g.GapCount > 0 {
			line += fmt.Sprintf(", gap P99 %s, longest gap %s", fmtMS(g.S(record.DistGap).Quantile(0.99)), fmtMS(g.LongestGapMS))
		}
		ev = append(ev, line)
	}
	return []runrecord.Finding{{
		ID: "stalls", Title: "Streams stall mid-answer", Severity: "warning",
		Evidence: ev,
		Advice: "Pauses longer than the stall threshold feel like a frozen answer. Look at the time series for " +
			"when they happen: under load they point at scheduler preemption or KV-cache pressure; at random, at " +
			"packet loss or a buffering hop. Gate them with a threshold on llm_stalls.",
		Values: map[string]float64{"stalled_share": float64(all.StalledRequests) / float64(all.Requests), "longest_gap_ms": all.LongestGapMS},
	}}
}

// ruleLengthVariance: E2E varies because answers vary in length, not because
// the service does: compare per-token times instead.
func ruleLengthVariance(r *Run) []runrecord.Finding {
	var ev []string
	for _, cat := range r.Categories() {
		var e2e, toks, tpot []float64
		for _, s := range r.samples[cat] {
			if ms, ok := s.E2E.MS(); ok && s.OutputTokens > 0 {
				e2e = append(e2e, ms)
				toks = append(toks, float64(s.OutputTokens))
				if ms, ok := s.TPOT.MS(); ok {
					tpot = append(tpot, ms)
				}
			}
		}
		if len(e2e) < lengthMinSamples {
			continue
		}
		es := spread(e2e)
		if es < lengthSpread {
			continue
		}
		rho := spearman(e2e, toks)
		if rho < lengthCorrelation {
			continue
		}
		ts := spread(tpot)
		if len(tpot) >= lengthMinSamples && ts > 1+(es-1)*lengthTPOTShare {
			continue // per-token time varies as much: length is not the whole story
		}
		ev = append(ev, fmt.Sprintf("%s: E2E P90/P10 = ×%.1f, rank correlation with output tokens %.2f; TPOT P90/P10 = ×%.1f",
			cat, es, rho, ts))
	}
	if len(ev) == 0 {
		return nil
	}
	return []runrecord.Finding{{
		ID: "length_variance", Title: "E2E spread is explained by output length", Severity: "info",
		Evidence: ev,
		Advice: "Answers of different length take different time; that is not instability. Compare TPOT or " +
			"tokens/s across runs, or fix the output length (max_tokens with ignore_eos on the server) when E2E " +
			"itself must be compared.",
	}}
}

// spread is P90/P10 of a sample (NaN when too small or P10 is 0).
func spread(v []float64) float64 {
	if len(v) < 10 {
		return nan()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	lo, hi := s[len(s)/10], s[len(s)*9/10]
	if lo <= 0 {
		return nan()
	}
	return hi / lo
}

// spearman is the rank correlation of two equally long samples.
func spearman(a, b []float64) float64 {
	ra, rb := ranks(a), ranks(b)
	var ma, mb float64
	for i := range ra {
		ma += ra[i]
		mb += rb[i]
	}
	n := float64(len(ra))
	ma, mb = ma/n, mb/n
	var cov, va, vb float64
	for i := range ra {
		cov += (ra[i] - ma) * (rb[i] - mb)
		va += (ra[i] - ma) * (ra[i] - ma)
		vb += (rb[i] - mb) * (rb[i] - mb)
	}
	if va == 0 || vb == 0 {
		return 0
	}
	return cov / math.Sqrt(va*vb)
}

// ranks gives average ranks (ties share the mean rank).
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(i, j int) bool { return v[idx[i]] < v[idx[j]] })
	out := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			out[idx[k]] = float64(i+j) / 2
		}
		i = j + 1
	}
	return out
}

// ruleDrift compares the first and last third of every stretch of steady load
// : warm-up makes the start slower, drift the end.
func ruleDrift(r *Run) []runrecord.Finding {
	tl := r.Timeline
	var ev []string
	vals := map[string]float64{}
	for _, seg := range steadySegments(tl) {
		n := seg[1] - seg[0]
		third := n / 3
		early := [2]int{seg[0], seg[0] + third}
		late := [2]int{seg[1] - third, seg[1]}
		when := fmt.Sprintf("at %s %s, %s–%s into the run", runrecord.FormatConc(runrecord.RoundLevel(tl.Buckets[seg[0]].LevelMax)), runrecord.LevelUnit(isRateClass(tl.Buckets[seg[0]].ClassMax)),
			fmtSecs(r, seg[0]), fmtSecs(r, seg[1]))
		for _, m := range []struct {
			name   string
			metric record.Dist
			pick   func(*Bucket) *sketch.Sketch
		}{
			{"TTFT", record.DistTTFT, func(b *Bucket) *sketch.Sketch { return b.TTFT }},
			{"tokens/s", record.DistTokensPerSec, func(b *Bucket) *sketch.Sketch { return b.TokensPerSec }},
		} {
			e, l := tl.window(early[0], early[1], m.pick), tl.window(late[0], late[1], m.pick)
			if e.Count() < driftMinSide || l.Count() < driftMinSide {
				continue
			}
			rm := q50(l) / q50(e)
			r25 := l.Quantile(0.25) / e.Quantile(0.25)
			r75 := l.Quantile(0.75) / e.Quantile(0.75)
			up := rm >= driftRatio && r25 >= driftQuartile && r75 >= driftQuartile
			down := rm <= 1/driftRatio && r25 <= 1/driftQuartile && r75 <= 1/driftQuartile
			if !up && !down {
				continue
			}
			ev = append(ev, fmt.Sprintf("%s: %s P50 %s in the first third vs %s in the last (×%.2f)",
				when, m.name, fmtMetric(m.metric, q50(e)), fmtMetric(m.metric, q50(l)), rm))
			vals[m.name+"_ratio"] = rm
		}
	}
	if len(ev) == 0 {
		return nil
	}
	return []runrecord.Finding{{
		ID: "drift", Title: "Warm-up or drift: the same load behaves differently early and late", Severity: "warning",
		Evidence: ev,
		Advice: "Results from one stretch of steady load are not stable. If the start is slower (cold cache, " +
			"autoscaling, JIT), discard a warm-up window; if the end is slower (throttling, leaks, cache eviction), " +
			"run longer (10–15 min) and look at the time series before trusting any percentile.",
		Values: vals,
	}}
}

func fmtSecs(r *Run, i int) string {
	return fmt.Sprintf("%.0fs", r.Timeline.BucketStart(i).Sub(r.Timeline.Origin).Seconds())
}

// steadySegments returns [from, to) bucket ranges during which calls started
// at one concurrency class, long enough to compare their thirds.
func steadySegments(tl *Timeline) [][2]int {
	var out [][2]int
	start, class := -1, -1
	flush := func(end int) {
		if start >= 0 && end-start >= driftMinBuckets && time.Duration(end-start)*tl.Width >= driftMinDuration*time.Second {
			out = append(out, [2]int{start, end})
		}
	}
	last := -1 // last bucket with a call start
	for i := range tl.Buckets {
		b := &tl.Buckets[i]
		if b.Requests == 0 {
			continue // long calls leave empty seconds; they do not end a stretch
		}
		lo, hi := b.ClassMin, b.ClassMax
		if lo != hi || hi != class {
			flush(last + 1)
			start, class = -1, -1
			if lo == hi {
				start, class = i, hi
			}
		}
		last = i
	}
	flush(last + 1)
	return out
}
