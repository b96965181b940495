package report

import (
	"fmt"
	"math"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// The load-stage rules' thresholds (docs/guide.md explains each one).
const (
	queueTTFTRatio    = 1.5  // TTFT median up ×1.5 between two stages…
	queueTTFTMinDelta = 50.0 // …and by at least 50 ms…
	queueTPSHolds     = 0.85 // …while tokens/s keeps ≥ 85 % of its median at the lower one
	decodeTPSFall     = 0.75 // tokens/s median at the highest stage ≤ 75 % of the lowest's
	stageConcRatio    = 1.5  // stages compared must differ by ×1.5 in concurrency

	kneeLatencyRise = 1.2 // latency up ≥ 20 % from one stage to the next…
	kneeMargin      = 1.1 // …and by ×1.1 more than throughput did
	kneeAdvice      = 0.8 // run at 80 % of the soft capacity
)

// The rules that read a run as a curve of latency against concurrency: which
// resource runs out as load rises and where. They compare
// stages of a few dozen calls, so every "went up" is also checked against
// sampling noise (collect_significance.go).

// decodeSpeed is the per-request tokens/s median of a group, or 1000/TPOT when
// the client did not report tokens/s; ok is false with too few calls.
func decodeSpeed(g *Group) (speed float64, ok bool) {
	if s := g.S(record.DistTokensPerSec); s.Count() >= stageMinCalls {
		return q50(s), true
	}
	if s := g.S(record.DistTPOT); s.Count() >= stageMinCalls && q50(s) > 0 {
		return 1000 / q50(s), true
	}
	return nan(), false
}

// decodeClearlySlower says whether streams decode more slowly in hi than in lo
// beyond sampling noise (on tokens/s, or on TPOT when that is all there is).
func decodeClearlySlower(lo, hi *Group) bool {
	if lo.S(record.DistTokensPerSec).Count() >= stageMinCalls && hi.S(record.DistTokensPerSec).Count() >= stageMinCalls {
		return clearlyAbove(lo.S(record.DistTokensPerSec), hi.S(record.DistTokensPerSec))
	}
	return clearlyAbove(hi.S(record.DistTPOT), lo.S(record.DistTPOT))
}

// stagePoint is one category at one stage, with the medians the rules compare.
type stagePoint struct {
	st        *Stage
	g         *Group
	ttft, tps float64
}

func (p stagePoint) vs(q stagePoint) string {
	return fmt.Sprintf("TTFT P50 %s at %s %s → %s at %s %s (×%.2f); tokens/s P50 %.1f → %.1f (×%.2f)",
		fmtMS(p.ttft), runrecord.FormatConc(p.st.Concurrency), p.st.Unit(), fmtMS(q.ttft), runrecord.FormatConc(q.st.Concurrency), q.st.Unit(), q.ttft/p.ttft,
		p.tps, q.tps, q.tps/p.tps)
}

// ruleLoadShape tells queueing (TTFT up, tokens/s steady) from decode
// saturation (tokens/s down), per category. Both can be true of
// one run: decode slows while free slots fill, then requests queue once they
// are full. So decode saturation compares the lowest and the highest stage,
// and queueing looks for the pair of stages where TTFT grew most while
// tokens/s held.
func ruleLoadShape(r *Run) []runrecord.Finding {
	stages := r.Stages()
	var queue, decode []string
	vals := map[string]float64{}
	for _, cat := range r.Categories() {
		var pts []stagePoint
		for _, st := range stages {
			g := st.ByCategory[cat]
			if g == nil || g.S(record.DistTTFT).Count() < stageMinCalls {
				continue
			}
			if tps, ok := decodeSpeed(g); ok {
				pts = append(pts, stagePoint{st: st, g: g, ttft: q50(g.S(record.DistTTFT)), tps: tps})
			}
		}
		if len(pts) < 2 {
			continue
		}
		lo, hi := pts[0], pts[len(pts)-1]
		if hi.st.Concurrency >= stageConcRatio*lo.st.Concurrency &&
			hi.tps/lo.tps <= decodeTPSFall && decodeClearlySlower(lo.g, hi.g) {
			decode = append(decode, cat+": "+lo.vs(hi))
			vals[cat+".tokens_per_sec_ratio"] = hi.tps / lo.tps
		}
		if a, b, ok := mostQueued(pts); ok {
			queue = append(queue, cat+": "+a.vs(b))
			vals[cat+".ttft_ratio"] = b.ttft / a.ttft
		}
	}
	var out []runrecord.Finding
	if len(queue) > 0 {
		out = append(out, runrecord.Finding{
			ID: "queue_bound", Title: "Queue-bound: TTFT grows with load while decode speed holds", Severity: "warning",
			Evidence: queue, Values: vals,
			Advice: "Requests wait before the model starts on them: the server has compute to spare but admits too " +
				"few requests at once, or a rate limiter queues them. Raise the server's batch/concurrency limit or add " +
				"replicas; on the client side keep concurrency below the knee and set a first-token timeout.",
		})
	}
	if len(decode) > 0 {
		out = append(out, runrecord.Finding{
			ID: "decode_saturated", Title: "Decode-saturated: tokens/s per request falls as load rises", Severity: "warning",
			Evidence: decode, Values: vals,
			Advice: "The accelerator is the bottleneck: every extra stream slows the others. Scale out, use a " +
				"smaller/quantised model or tune batch size; more concurrency will not raise throughput much.",
		})
	}
	return out
}

// mostQueued finds the two stages between which TTFT grew most while tokens/s
// held: the signature of requests waiting for a slot.
func mostQueued(pts []stagePoint) (a, b stagePoint, ok bool) {
	best := 0.0
	for i, lo := range pts {
		for _, hi := range pts[i+1:] {
			growth := hi.ttft / lo.ttft
			if hi.st.Concurrency < stageConcRatio*lo.st.Concurrency ||
				growth < queueTTFTRatio || hi.ttft-lo.ttft < queueTTFTMinDelta || hi.tps/lo.tps < queueTPSHolds ||
				!clearlyAbove(hi.g.S(record.DistTTFT), lo.g.S(record.DistTTFT)) {
				continue
			}
			if growth > best {
				a, b, ok, best = lo, hi, true, growth
			}
		}
	}
	return a, b, ok
}

// ruleKnee finds the concurrency beyond which latency rises faster than
// throughput in a step load and advises running at 80 % of it.
func ruleKnee(r *Run) []runrecord.Finding {
	var stages []*Stage
	for _, st := range r.Stages() {
		if st.All.S(record.DistE2E).Count() >= stageMinCalls || st.All.S(record.DistTTFT).Count() >= stageMinCalls {
			stages = append(stages, st)
		}
	}
	if len(stages) < 3 {
		return nil
	}
	// One latency for the whole curve: E2E when every stage has it.
	metric, name := record.DistE2E, "E2E"
	for _, st := range stages {
		if st.All.S(record.DistE2E).Count() < stageMinCalls {
			metric, name = record.DistTTFT, "TTFT"
		}
	}
	useTokens := true
	for _, st := range stages {
		if st.All.OutputTokens == 0 {
			useTokens = false
		}
	}
	throughput := func(st *Stage) float64 {
		if useTokens {
			return st.OutputTokensPerSec
		}
		return st.RequestsPerSec
	}
	unit := map[bool]string{true: "output tokens/s", false: "requests/s"}[useTokens]
	for i := 1; i < len(stages); i++ {
		a, b := stages[i-1], stages[i]
		la, lb := q50(a.All.S(metric)), q50(b.All.S(metric))
		gl := lb / la
		gt := throughput(b) / throughput(a)
		if gl < kneeLatencyRise || gl <= gt*kneeMargin || !clearlyAbove(b.All.S(metric), a.All.S(metric)) {
			continue
		}
		knee, what := a.Concurrency, "concurrent requests"
		rec := math.Floor(kneeAdvice * knee)
		if a.ByRate {
			what, rec = "requests per second", runrecord.RoundLevel(kneeAdvice*knee)
		}
		return []runrecord.Finding{{
			ID: "knee", Title: fmt.Sprintf("Soft capacity (knee) at about %s %s", runrecord.FormatConc(knee), what),
			Severity: "info",
			Evidence: []string{
				fmt.Sprintf("from %s to %s %s %s P50 went %s → %s (×%.2f) while throughput went %.1f → %.1f %s (×%.2f)",
					runrecord.FormatConc(a.Concurrency), runrecord.FormatConc(b.Concurrency), b.Unit(), name, fmtMS(la), fmtMS(lb), gl,
					throughput(a), throughput(b), unit, gt),
			},
			Advice: fmt.Sprintf("Beyond ~%s %s the service queues instead of serving more. "+
				"Plan for at most 80%% of it: ~%s %s, and re-measure when the server or model changes.",
				runrecord.FormatConc(knee), what, runrecord.FormatConc(rec), what),
			Values: map[string]float64{"knee": knee, "recommended": rec, "latency_ratio": gl, "throughput_ratio": gt},
		}}
	}
	return nil
}
