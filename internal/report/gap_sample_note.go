package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// What k6's own llm_inter_token_gap is, when gapSamples 'sampled' left gaps
// out of it. The sampler gives every gap the same chance at one offered
// rate, and follows the rate: where the rate changed over the test (a ramp,
// a spike, a quiet end), a stretch that offered fewer gaps a second is kept
// at a higher share, and k6's percentiles weigh it more than its gaps do.
// The timeline knows, for each of its buckets, the gaps of the calls that
// started there (a coarse sketch) and how many of them the cap left out, so
// it can tell the share each stretch was kept at and what k6's percentiles
// then read: the buckets' gaps, each weighed by its bucket's share.

// minNoteGaps is how many gaps a bucket needs for its kept share to count
// in the range the note gives: a bucket of a few calls at the test's edge
// says nothing of the rate.
const minNoteGaps = 100

// gapSampleNote says how many gaps the cap kept out of k6's
// llm_inter_token_gap and, from the timeline, the share each stretch was
// kept at and what k6's P95 and P99 read against every gap's ("" when no
// gap was left out).
func gapSampleNote(all *Group, tl *Timeline) string {
	if all.GapsUnsampled == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "llm_inter_token_gap in k6 is a sample: the gapSampleRate cap left out %d of %d gaps (%s); "+
		"the gap figures of this report use every gap", all.GapsUnsampled, all.GapCount,
		fmtPct(ratio(float64(all.GapsUnsampled), float64(all.GapCount))))
	lo, hi, ok := keptShareRange(tl)
	if !ok {
		return b.String()
	}
	fmt.Fprintf(&b, ". It kept %s–%s of the gaps of each stretch of the test (the share follows the offered rate)", fmtPct(lo), fmtPct(hi))
	var parts []string
	same := true
	for _, q := range []float64{0.95, 0.99} {
		k6, every := timelineGapQuantile(tl, q, true), timelineGapQuantile(tl, q, false)
		if math.IsNaN(k6) || math.IsNaN(every) {
			return b.String()
		}
		same = same && fmtMS(k6) == fmtMS(every)
		parts = append(parts, fmt.Sprintf("P%.0f ≈ %s where every gap's is %s", 100*q, fmtMS(k6), fmtMS(every)))
	}
	if same {
		b.WriteString(": k6's P95 and P99 read as every gap's do, as far as the timeline's coarse buckets tell")
	} else {
		fmt.Fprintf(&b, ": k6's %s (both read through the timeline's coarse buckets)", strings.Join(parts, ", "))
	}
	return b.String()
}

// keptShareRange is the lowest and highest share of its gaps a bucket of
// at least minNoteGaps kept for k6 (false when fewer than two such buckets).
func keptShareRange(tl *Timeline) (lo, hi float64, ok bool) {
	if tl == nil {
		return 0, 0, false
	}
	n := 0
	lo, hi = 1, 0
	for i := range tl.Buckets {
		s, has := keptShare(&tl.Buckets[i])
		if !has || tl.Buckets[i].Gap.Count() < minNoteGaps {
			continue
		}
		lo, hi, n = min(lo, s), max(hi, s), n+1
	}
	return lo, hi, n >= 2
}

// keptShare is the share of a bucket's gaps the cap kept for k6 (false
// without gaps).
func keptShare(b *Bucket) (float64, bool) {
	if b.Gap == nil || b.Gap.Count() == 0 {
		return 0, false
	}
	n := float64(b.Gap.Count())
	return max(0, n-float64(b.GapsUnsampled)) / n, true
}

// timelineGapQuantile is the q-quantile of the timeline's gaps, each
// bucket's weighed by the share it kept for k6 (kept) or each gap once:
// the first is what k6's percentile of its sample reads, the second every
// gap's through the same coarse buckets, so the two differ by the weighing
// alone. NaN without gaps.
func timelineGapQuantile(tl *Timeline, q float64, kept bool) float64 {
	type bin struct{ lo, hi, w float64 }
	var bins []bin
	total := 0.0
	for i := range tl.Buckets {
		b := &tl.Buckets[i]
		share, has := keptShare(b)
		if !has {
			continue
		}
		if !kept {
			share = 1
		}
		b.Gap.Bins(func(lo, hi float64, count uint64) {
			w := float64(count) * share
			bins, total = append(bins, bin{lo, hi, w}), total+w
		})
	}
	if total <= 0 {
		return math.NaN()
	}
	sort.Slice(bins, func(i, j int) bool { return bins[i].lo < bins[j].lo })
	acc := 0.0
	for _, b := range bins {
		if acc += b.w; acc >= q*total {
			return (b.lo + b.hi) / 2
		}
	}
	last := bins[len(bins)-1]
	return (last.lo + last.hi) / 2
}
