package module

import (
	"cmp"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// With the default gapSamples ('sampled') the process sends at most
// gapSampleRate gap samples a second; what it leaves out is counted, and each
// call's own gaps (result.gaps) stay whole.
func TestSampledGapsAreCappedAndCounted(t *testing.T) {
	t.Parallel()
	tokens := make([]string, 40)
	for i := range tokens {
		tokens[i] = "t"
	}
	srv, _ := streamServer(t, 0, 0, tokens)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, gapSampleRate: 1});`, srv.URL))
	total := 0
	for i := range 3 {
		res := vu.chat(`{messages: []}, {gaps: true}`)
		require.Equal(t, true, res["ok"], "call %d", i)
		gaps := res["gaps"].([]float64) //nolint:forcetypeassert
		require.Len(t, gaps, 39, "result.gaps keeps every gap of the call")
		total += len(gaps)
		if i == 0 {
			// The sampler learns the offered rate over its first window
			// (200 ms), keeping everything meanwhile; after it, ~40 gaps in
			// far less than 40 s is over the cap of 1 a second.
			time.Sleep(250 * time.Millisecond)
		}
	}
	got := vu.drain()
	sent := len(got["llm_inter_token_gap"])
	unsampled := 0.0
	for _, s := range got["llm_gaps_unsampled"] {
		unsampled += s.Value
	}
	require.Equal(t, total, sent+int(unsampled), "every gap is sent or counted as left out")
	require.Positive(t, unsampled, "the cap left gaps out")
	require.Less(t, sent, total)
}

// gapSamples 'event' still sends every gap.
func TestEventGapSamplesSendEveryGap(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 0, 0, []string{"a", "b", "c", "d"})
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, gapSamples: 'event', gapSampleRate: 1});`, srv.URL))
	for range 3 {
		require.Equal(t, true, vu.chat(`{messages: []}`)["ok"])
	}
	got := vu.drain()
	require.Len(t, got["llm_inter_token_gap"], 9)
	require.Empty(t, got["llm_gaps_unsampled"])
}

// A test run with a cap of 150 gaps a second (gapSampleRate; the default
// works the same, at a rate a loaded CI machine's httptest server cannot
// offer three times over): 16 calls at a time of 200 gaps each, from a server
// that pauses 0.4–1.2 ms before most tokens and 3 ms before every 25th (a
// slow tail of 4 %), twice as long in every other call (the slow calls end
// last), several times more gaps a second than the cap. k6's
// percentiles of the kept llm_inter_token_gap samples agree with the exact
// ones of every gap (result.gaps), each round of 16 calls weighted by the
// share of its gaps the sampler kept. The weight is the promise the sampler
// makes: every gap offered at one rate has the same chance. A busy machine
// (the race detector, the other tests) offers fewer gaps a second while it
// stretches them, and the sampler, following the rate, keeps a higher share
// of that slow stretch; unweighted, the comparison measured the machine.
// They are compared by rank, the error a uniform sample really has: the p-th
// percentile of n kept values ranks within about sqrt(p(1-p)/n) of p among
// all (n ≥ 1 200: 0.014 at the median, 0.0029 at P99); the bounds below are
// three to four of those. Whether the choice is fair by size, place and call
// under bursts and waves is tested on the sampler itself, on a clock of its
// own (internal/sample); this is the whole path, the k6 samples, the count of
// those left out and the cap.
func TestSampledGapPercentilesAgreeWithEveryGap(t *testing.T) {
	t.Parallel()
	const gapCap = 150
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher) //nolint:forcetypeassert
		pace := time.Duration(1 + served.Add(1)%2)
		_, _ = fmt.Fprint(w, roleChunk)
		for i := range 201 {
			switch {
			case i == 0:
			case i%25 == 0:
				time.Sleep(pace * 3 * time.Millisecond)
			default:
				// 0.4–1.2 ms: under the race detector on a busy machine,
				// shorter gaps are mostly read together, and gaps of zero
				// then fill the lower half: the median sits on their edge,
				// and whether a sample's falls on zero is a coin toss
				// weighted by the calls a batch happened to read late (a
				// call's gaps are kept together, so they do not average
				// out as independent ones would).
				time.Sleep(pace * time.Duration(400+(i*37)%800) * time.Microsecond)
			}
			_, _ = fmt.Fprint(w, chunk("t", ""))
			fl.Flush()
		}
		_, _ = fmt.Fprint(w, chunk("", "stop"), usageChunk(12, 201, 0), "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, gapSampleRate: %d});`, srv.URL, gapCap))
	var all []weighed
	var kept []float64
	unsampled := 0.0
	start := time.Now()
	// On until enough samples were kept to compare percentiles: the
	// sampler aims at 80 % of its rate (about 8 s), longer when the race
	// detector on a busy machine offers fewer gaps.
	for time.Since(start) < 3*time.Second || (len(kept) < 1200 && time.Since(start) < 20*time.Second) {
		// 16 calls at once, as 16 VUs would make them.
		vu.run(`globalThis.all = undefined; Promise.all(Array.from({length: 16}, () => client.chat({messages: []}, {gaps: true})))` +
			`.then(rs => { globalThis.all = rs })`)
		results, ok := plain(vu.rt.VU.Runtime().Get("all").Export()).([]any)
		require.True(t, ok, "the calls resolved")
		var round []float64
		for _, r := range results {
			res := r.(map[string]any) //nolint:forcetypeassert
			require.Equal(t, true, res["ok"])
			round = append(round, res["gaps"].([]float64)...) //nolint:forcetypeassert
		}
		got := vu.drain()
		keptHere, leftHere := len(got["llm_inter_token_gap"]), 0.0
		for _, s := range got["llm_inter_token_gap"] {
			kept = append(kept, s.Value)
		}
		for _, s := range got["llm_gaps_unsampled"] {
			leftHere += s.Value
		}
		unsampled += leftHere
		share := 0.0
		if offered := float64(keptHere) + leftHere; offered > 0 {
			share = float64(keptHere) / offered
		}
		for _, g := range round {
			all = append(all, weighed{g, share})
		}
	}
	elapsed := time.Since(start).Seconds()
	require.Equal(t, len(all), len(kept)+int(unsampled), "every gap is sent or counted as left out")
	require.Greater(t, float64(len(all)), 3*gapCap*elapsed, "the offered rate is well over the cap")
	// The sampler's hard bound: its rate, plus what its bucket starts with
	// (twice a 200 ms window's share).
	require.LessOrEqual(t, float64(len(kept)), gapCap*(elapsed+0.4), "the cap holds")
	require.GreaterOrEqual(t, len(kept), 1200, "enough kept samples to compare percentiles")
	slices.SortFunc(all, func(a, b weighed) int { return cmp.Compare(a.v, b.v) })
	slices.Sort(kept)
	total := 0.0
	for _, g := range all {
		total += g.w
	}
	// rankOf is the weighted share of all gaps below v and up to v (equal
	// gaps share a rank range); at returns the weighted p-th gap.
	rankOf := func(v float64) (below, upTo float64) {
		for _, g := range all {
			if g.v < v {
				below += g.w
			}
			if g.v <= v {
				upTo += g.w
			}
		}
		return below / total, upTo / total
	}
	at := func(p float64) float64 {
		acc := 0.0
		for _, g := range all {
			if acc += g.w; acc >= p*total {
				return g.v
			}
		}
		return all[len(all)-1].v
	}
	for _, c := range []struct{ q, within float64 }{{0.5, 0.05}, {0.9, 0.03}, {0.99, 0.01}} {
		k := kept[int(c.q*float64(len(kept)-1))]
		below, upTo := rankOf(k)
		t.Logf("p%g: kept %.4f ms (of %d kept) ranks %.4f–%.4f among all %d gaps, weighted (exact %.4f ms; unweighted %.4f ms)",
			c.q*100, k, len(kept), below, upTo, len(all), at(c.q), unweightedAt(all, c.q))
		require.GreaterOrEqual(t, c.q, below-c.within, "p%g of the kept gaps", c.q*100)
		require.LessOrEqual(t, c.q, upTo+c.within, "p%g of the kept gaps", c.q*100)
	}
}

// weighed is one gap of the comparison and the share of its round the
// sampler kept.
type weighed struct{ v, w float64 }

// unweightedAt is the p-th of all gaps, each counted once: logged beside the
// weighted one to show how far the machine's pace moved it.
func unweightedAt(all []weighed, p float64) float64 {
	return all[int(p*float64(len(all)-1))].v
}
