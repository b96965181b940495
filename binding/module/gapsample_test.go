package module

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
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
// slow tail of 4 %), several times more gaps a second than the cap. k6's
// percentiles of the kept llm_inter_token_gap samples agree with the exact
// ones of every gap (result.gaps). They are compared by rank, the error a
// uniform sample really has: the p-th percentile of n kept values ranks
// within about sqrt(p(1-p)/n) of p among all (n ≥ 1 200: 0.014 at the
// median, 0.0029 at P99); the bounds below are three to four of those. A
// choice biased by size or by call (every gap of some calls, none of others)
// moves the P99 past it.
func TestSampledGapPercentilesAgreeWithEveryGap(t *testing.T) {
	t.Parallel()
	const gapCap = 150
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fl := w.(http.Flusher) //nolint:forcetypeassert
		_, _ = fmt.Fprint(w, roleChunk)
		for i := range 201 {
			switch {
			case i == 0:
			case i%25 == 0:
				time.Sleep(3 * time.Millisecond)
			default:
				// 0.4–1.2 ms: under the race detector on a busy machine,
				// shorter gaps are mostly read together, and gaps of zero
				// then fill the lower half: the median sits on their edge,
				// and whether a sample's falls on zero is a coin toss
				// weighted by the calls a batch happened to read late (a
				// call's gaps are kept together, so they do not average
				// out as independent ones would).
				time.Sleep(time.Duration(400+(i*37)%800) * time.Microsecond)
			}
			_, _ = fmt.Fprint(w, chunk("t", ""))
			fl.Flush()
		}
		_, _ = fmt.Fprint(w, chunk("", "stop"), usageChunk(12, 201, 0), "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, gapSampleRate: %d});`, srv.URL, gapCap))
	var all, kept []float64
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
		for _, r := range results {
			res := r.(map[string]any) //nolint:forcetypeassert
			require.Equal(t, true, res["ok"])
			all = append(all, res["gaps"].([]float64)...) //nolint:forcetypeassert
		}
		got := vu.drain()
		for _, s := range got["llm_inter_token_gap"] {
			kept = append(kept, s.Value)
		}
		for _, s := range got["llm_gaps_unsampled"] {
			unsampled += s.Value
		}
	}
	elapsed := time.Since(start).Seconds()
	require.Equal(t, len(all), len(kept)+int(unsampled), "every gap is sent or counted as left out")
	require.Greater(t, float64(len(all)), 3*gapCap*elapsed, "the offered rate is well over the cap")
	// The sampler's hard bound: its rate, plus what its bucket starts with
	// (twice a 200 ms window's share).
	require.LessOrEqual(t, float64(len(kept)), gapCap*(elapsed+0.4), "the cap holds")
	require.GreaterOrEqual(t, len(kept), 1200, "enough kept samples to compare percentiles")
	slices.Sort(all)
	slices.Sort(kept)
	for _, c := range []struct{ q, within float64 }{{0.5, 0.05}, {0.9, 0.03}, {0.99, 0.01}} {
		k := kept[int(c.q*float64(len(kept)-1))]
		// Equal gaps share a rank range: the kept value's is [below, upTo].
		below := float64(sort.SearchFloat64s(all, k)) / float64(len(all))
		upTo := float64(sort.Search(len(all), func(i int) bool { return all[i] > k })) / float64(len(all))
		t.Logf("p%g: kept %.4f ms (of %d kept) ranks %.4f–%.4f among all %d gaps (exact %.4f ms)",
			c.q*100, k, len(kept), below, upTo, len(all), all[int(c.q*float64(len(all)-1))])
		require.GreaterOrEqual(t, c.q, below-c.within, "p%g of the kept gaps", c.q*100)
		require.LessOrEqual(t, c.q, upTo+c.within, "p%g of the kept gaps", c.q*100)
	}
}
