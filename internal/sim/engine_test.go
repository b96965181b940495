package sim

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Engine model tests: one engine on a FakeClock, requests scheduled at fake
// times, exact expectations derived by hand from the step formula.

var t0 = time.Unix(1_700_000_000, 0) //nolint:gochecknoglobals // test epoch

// testProfile: prefill step = 10 ms + 1 ms/token; decode step = 20 ms + 5 ms/seq.
func testProfile() ModelProfile {
	return ModelProfile{
		MaxNumSeqs: 2, MaxQueue: -1,
		PrefillBaseMs: 10, PrefillPerTokenMs: 1,
		DecodeBaseMs: 20, DecodePerSeqMs: 5, TokensPerStep: 1,
		DefaultMaxTokens: 16, OutputDist: "exact", RetryAfterSec: 1,
	}
}

type harness struct {
	t       *testing.T
	clock   *FakeClock
	eng     *engine
	subs    []*submission
	started bool
}

type submission struct {
	seq   *Seq
	err   error
	ready chan struct{}
}

func newHarness(t *testing.T, p ModelProfile) *harness {
	t.Helper()
	c := NewFakeClock(t0)
	h := &harness{t: t, clock: c, eng: newEngine("m", p, c)}
	t.Cleanup(h.eng.close)
	return h
}

// at submits spec at t0+msOff (fake time).
func (h *harness) at(msOff float64, spec seqSpec) *submission {
	sub := &submission{ready: make(chan struct{})}
	h.clock.At(t0.Add(ms(msOff)), func() {
		sub.seq, sub.err = h.eng.submit(spec)
		close(sub.ready)
	})
	h.subs = append(h.subs, sub)
	return sub
}

// run starts the engine and waits (in real time) until every submitted
// sequence has ended.
func (h *harness) run() {
	h.t.Helper()
	if !h.started {
		h.eng.start()
		h.started = true
	}
	for _, sub := range h.subs {
		select {
		case <-sub.ready:
		case <-time.After(5 * time.Second):
			h.t.Fatal("submission never happened")
		}
		if sub.err != nil {
			continue
		}
		select {
		case <-sub.seq.ended:
		case <-time.After(5 * time.Second):
			h.t.Fatalf("sequence never ended: %+v", h.eng.timeline(sub.seq))
		}
	}
}

func spec(prompt, out int) seqSpec {
	return seqSpec{PromptTokens: prompt, OutputTokens: out, FinishReason: "length", TextSeed: 1, Faults: noFaults()}
}

// msAt is t's offset from t0 in ms.
func msAt(t time.Time) float64 {
	if t.IsZero() {
		return -1
	}
	return float64(t.Sub(t0)) / float64(time.Millisecond)
}

// tokenTimes lists the fake times (ms) of s's events and their token counts.
func tokenTimes(s *Seq) (times []float64, sizes []int) {
	evs, _ := s.take(nil)
	for _, ev := range evs {
		times = append(times, msAt(ev.At))
		sizes = append(sizes, ev.N)
	}
	return times, sizes
}

func TestEngineQueueingAboveMaxNumSeqs(t *testing.T) {
	h := newHarness(t, testProfile()) // 2 slots
	a, b, c := h.at(0, spec(10, 3)), h.at(0, spec(10, 3)), h.at(0, spec(10, 3))
	h.run()

	// A and B prefill together: 10 + 20×1 = 30 ms; then decode steps of 20 + 2×5 = 30 ms.
	for _, s := range []*Seq{a.seq, b.seq} {
		tl := h.eng.timeline(s)
		assert.Equal(t, 0.0, msAt(tl.Admitted))
		assert.Equal(t, 30.0, msAt(tl.PrefillEnd))
		times, _ := tokenTimes(s)
		assert.Equal(t, []float64{30, 60, 90}, times)
		assert.Equal(t, OutcomeOK, tl.Outcome)
	}
	// C waits for a free slot (90 ms of queue), prefills alone (10 + 10 = 20 ms),
	// then decodes alone: 25 ms per token. TTFT grew, tokens/s did not fall.
	tl := h.eng.timeline(c.seq)
	assert.Equal(t, 0.0, msAt(tl.Enqueued))
	assert.Equal(t, 90.0, msAt(tl.Admitted))
	assert.Equal(t, 90.0, msAt(tl.PrefillStart))
	assert.Equal(t, 110.0, msAt(tl.PrefillEnd))
	times, _ := tokenTimes(c.seq)
	assert.Equal(t, []float64{110, 135, 160}, times)
	assert.Equal(t, 160.0, msAt(tl.Done))
}

func TestEngineDecodeSlowsWithBatchSize(t *testing.T) {
	gap := func(n int) float64 {
		p := testProfile()
		p.MaxNumSeqs = 8
		h := newHarness(t, p)
		var subs []*submission
		for range n {
			subs = append(subs, h.at(0, spec(4, 4)))
		}
		h.run()
		times, _ := tokenTimes(subs[0].seq)
		require.Len(t, times, 4)
		return times[3] - times[2]
	}
	assert.Equal(t, 25.0, gap(1)) // 20 + 1×5
	assert.Equal(t, 40.0, gap(4)) // 20 + 4×5
	assert.Equal(t, 60.0, gap(8)) // 20 + 8×5
}

func TestEnginePrefillCost(t *testing.T) {
	for _, tc := range []struct{ prompt, ttft int }{{1, 11}, {100, 110}, {1000, 1010}} {
		h := newHarness(t, testProfile())
		s := h.at(0, spec(tc.prompt, 1))
		h.run()
		tl := h.eng.timeline(s.seq)
		assert.Equal(t, float64(tc.ttft), msAt(tl.FirstToken), "prompt %d", tc.prompt)
		assert.Equal(t, float64(tc.ttft), msAt(tl.PrefillEnd))
	}
}

func TestEngineLongPrefillDelaysEveryonesDecode(t *testing.T) {
	run := func(chunk int) []float64 {
		p := testProfile()
		p.PrefillChunkTokens = chunk
		h := newHarness(t, p)
		a := h.at(0, spec(10, 4))
		h.at(35, spec(1000, 1))
		h.run()
		times, _ := tokenTimes(a.seq)
		return times
	}
	// A: prefill 0→20, token 2 at 45. B (1000 tokens) arrives at 35, is
	// admitted at 45, and its prefill (10 + 1000) shares the next step with
	// A's decode (20 + 5): A's third token waits 1035 ms.
	assert.Equal(t, []float64{20, 45, 1080, 1105}, run(0))
	// Chunked prefill (100 tokens a step) bounds A's gap at 10 + 100 + 25 = 135 ms.
	chunked := run(100)
	assert.Equal(t, []float64{20, 45, 180, 315}, chunked)
}

func idsFrom(start, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(start + i) //nolint:gosec // small
	}
	return out
}

func TestEnginePrefixCacheHitSkipsPrefill(t *testing.T) {
	p := testProfile()
	p.PrefixCache, p.CacheBlockTokens, p.CacheCapacityBlks = true, 16, 1024
	h := newHarness(t, p)
	cached := func(ids []uint32) seqSpec { s := spec(len(ids), 1); s.PromptIDs = ids; return s }
	prompt := idsFrom(1000, 100)
	first := h.at(0, cached(prompt))
	again := h.at(500, cached(prompt))
	// Shares the first 64 tokens (4 blocks), then differs.
	partial := h.at(1000, cached(append(append([]uint32{}, prompt[:70]...), idsFrom(9000, 30)...)))
	// Same tokens but the first one differs: the chain breaks at block 0.
	busted := h.at(1500, cached(append([]uint32{7}, prompt[1:]...)))
	h.run()

	tl := h.eng.timeline(first.seq)
	assert.Equal(t, 0, tl.CachedTokens)
	assert.Equal(t, 110.0, msAt(tl.PrefillEnd)) // 10 + 100

	// 6 whole blocks (96 tokens) are reused; at least the last token is computed.
	tl = h.eng.timeline(again.seq)
	assert.Equal(t, 96, tl.CachedTokens)
	assert.Equal(t, 514.0, msAt(tl.PrefillEnd)) // 10 + 4

	tl = h.eng.timeline(partial.seq)
	assert.Equal(t, 64, tl.CachedTokens)
	assert.Equal(t, 1046.0, msAt(tl.PrefillEnd)) // 10 + 36

	tl = h.eng.timeline(busted.seq)
	assert.Equal(t, 0, tl.CachedTokens)
	assert.Equal(t, 1610.0, msAt(tl.PrefillEnd))

	snap := h.eng.snapshot()
	assert.Equal(t, int64(400), snap.stats.cacheQueries)
	assert.Equal(t, int64(160), snap.stats.cacheHits)
	assert.Equal(t, int64(400-160), snap.stats.prefillTokens)
}

func TestEnginePrefixCacheHitsGeneratedBlocks(t *testing.T) {
	// A next conversation turn (prompt + answer + more) reuses the answer's blocks.
	p := testProfile()
	p.PrefixCache, p.CacheBlockTokens, p.CacheCapacityBlks = true, 16, 1024
	h := newHarness(t, p)
	prompt := idsFrom(1000, 32)
	s1 := spec(32, 32)
	s1.PromptIDs = prompt
	turn1 := h.at(0, s1)
	h.run()
	require.Equal(t, OutcomeOK, h.eng.timeline(turn1.seq).Outcome)

	next := append(h.eng.fullSequence(turn1.seq), idsFrom(5000, 8)...) // 72 tokens
	s2 := spec(len(next), 1)
	s2.PromptIDs = next
	turn2 := h.at(msAt(h.clock.Now())+1, s2)
	h.run()
	assert.Equal(t, 64, h.eng.timeline(turn2.seq).CachedTokens)
}

func TestEngineQueueFull(t *testing.T) {
	p := testProfile()
	p.MaxNumSeqs, p.MaxQueue = 1, 1
	h := newHarness(t, p)
	// Before the engine runs: A will take the free slot, B waits, C is refused.
	_, err := h.eng.submit(spec(1, 1))
	require.NoError(t, err)
	_, err = h.eng.submit(spec(1, 1))
	require.NoError(t, err)
	_, err = h.eng.submit(spec(1, 1))
	require.ErrorIs(t, err, errQueueFull)

	p.MaxQueue = 0 // nothing may wait: only a free slot admits
	h2 := newHarness(t, p)
	_, err = h2.eng.submit(spec(1, 1))
	require.NoError(t, err)
	_, err = h2.eng.submit(spec(1, 1))
	require.ErrorIs(t, err, errQueueFull)
}

func faulted(prompt, out int, header string) seqSpec {
	s := spec(prompt, out)
	f, err := ParseFaults(header)
	if err != nil {
		panic(err)
	}
	s.Faults = f
	return s
}

func TestEngineFaultStall(t *testing.T) {
	h := newHarness(t, testProfile())
	s := h.at(0, faulted(10, 5, "stall=100@2"))
	h.run()
	times, _ := tokenTimes(s.seq)
	// 20 (prefill), 45; paused until 145; then 170, 195, 220.
	assert.Equal(t, []float64{20, 45, 170, 195, 220}, times)
	assert.Equal(t, OutcomeOK, h.eng.timeline(s.seq).Outcome)
}

func TestEngineFaultStallAfterLastToken(t *testing.T) {
	h := newHarness(t, testProfile())
	s := h.at(0, faulted(10, 2, "stall=100@2"))
	h.run()
	times, _ := tokenTimes(s.seq)
	assert.Equal(t, []float64{20, 45}, times)
	assert.Equal(t, 145.0, msAt(h.eng.timeline(s.seq).Done)) // the end waits for the stall
}

func TestEngineFaultTTFT(t *testing.T) {
	h := newHarness(t, testProfile())
	s := h.at(0, faulted(10, 3, "ttft=500"))
	other := h.at(0, spec(10, 3))
	h.run()
	times, _ := tokenTimes(s.seq)
	// Prefill (both: 10 + 20) ends at 30; the first token is held 500 ms.
	assert.Equal(t, []float64{530, 555, 580}, times)
	assert.Equal(t, 30.0, msAt(h.eng.timeline(s.seq).PrefillEnd))
	// The paused sequence is not decoded: the other one decodes alone.
	otimes, _ := tokenTimes(other.seq)
	assert.Equal(t, []float64{30, 55, 80}, otimes)
}

func TestEngineFaultsEndEarly(t *testing.T) {
	p := testProfile()
	p.MaxNumSeqs = 1
	h := newHarness(t, p)
	disc := h.at(0, faulted(10, 5, "disconnect@2"))
	errd := h.at(0, faulted(10, 5, "error@0"))
	h.run()
	times, _ := tokenTimes(disc.seq)
	assert.Equal(t, []float64{20, 45}, times)
	tl := h.eng.timeline(disc.seq)
	assert.Equal(t, OutcomeDisconnect, tl.Outcome)
	assert.Equal(t, 45.0, msAt(tl.Done))
	// The slot frees at once: the next request is admitted at 45.
	tl = h.eng.timeline(errd.seq)
	assert.Equal(t, 45.0, msAt(tl.Admitted))
	assert.Equal(t, 65.0, msAt(tl.PrefillEnd))
	assert.Equal(t, OutcomeError, tl.Outcome)
	assert.Equal(t, 0, tl.Generated)
}

func TestEngineTokensPerStepAndFaultPoints(t *testing.T) {
	p := testProfile()
	p.TokensPerStep = 3
	h := newHarness(t, p)
	plain := h.at(0, spec(4, 7))
	h.run()
	_, sizes := tokenTimes(plain.seq)
	assert.Equal(t, []int{3, 3, 1}, sizes)

	// A fault point splits a step's chunk, so "after k tokens" is exact.
	h2 := newHarness(t, p)
	split := h2.at(0, faulted(4, 7, "malformed@2"))
	h2.run()
	times, sizes := tokenTimes(split.seq)
	assert.Equal(t, []int{2, 3, 2}, sizes)
	assert.Equal(t, []float64{14, 39, 64}, times)
}

func TestEngineCancel(t *testing.T) {
	p := testProfile()
	p.MaxNumSeqs = 1
	h := newHarness(t, p)
	a := h.at(0, spec(10, 100))
	b := h.at(0, spec(10, 1))
	h.clock.At(t0.Add(50*time.Millisecond), func() { h.eng.cancel(a.seq) })
	h.run()
	tl := h.eng.timeline(a.seq)
	assert.Equal(t, OutcomeCanceled, tl.Outcome)
	// Canceled at 50, during the step 45→70; the slot frees at 70.
	assert.Equal(t, 70.0, msAt(tl.Done))
	assert.Equal(t, 70.0, msAt(h.eng.timeline(b.seq).Admitted))
}

func TestEngineCloseEndsSequences(t *testing.T) {
	// Real clock: a fake one would jump over the hour-long stall.
	e := newEngine("m", testProfile(), RealClock{})
	s, err := e.submit(faulted(10, 5, "stall=3600000@1"))
	require.NoError(t, err)
	e.start()
	<-s.ready // the first token (after a 20 ms prefill), then the stall
	e.close()
	<-s.ended
	evs, final := s.take(nil)
	assert.True(t, final)
	assert.Len(t, evs, 1)
	assert.Equal(t, OutcomeShutdown, e.timeline(s).Outcome)
	_, err = e.submit(spec(1, 1))
	require.ErrorIs(t, err, errClosed)
	e.close() // twice is fine
}

func TestOutputLength(t *testing.T) {
	m := &model{p: testProfile()}
	n, reason := m.outputLength(50, 1)
	assert.Equal(t, 50, n)
	assert.Equal(t, "length", reason)

	for _, dist := range []string{"uniform", "exponential"} {
		m.p.OutputDist, m.p.OutputMinTokens, m.p.OutputMeanTokens = dist, 10, 100
		sum, stops := 0, 0
		const draws = 4000
		for i := range draws {
			n, reason := m.outputLength(1000, splitmix64(uint64(i)))
			require.GreaterOrEqual(t, n, 10)
			require.LessOrEqual(t, n, 1000)
			sum += n
			if reason == "stop" {
				stops++
			}
		}
		mean := float64(sum) / draws
		assert.InDelta(t, 100, mean, 8, dist)
		assert.Greater(t, stops, draws*9/10, dist)
		// Capped by max_tokens, with finish_reason "length".
		n, reason := m.outputLength(5, 3)
		assert.Equal(t, 5, n)
		assert.Equal(t, "length", reason)
	}
}
