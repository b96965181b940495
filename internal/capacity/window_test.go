package capacity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// drive sends calls at 20 req/s (whatever the level) for span, call i
// taking ttft(i, its send time from the start) to its first token and 100
// ms more to its end, and returns the search's windows after it.
func drive(t *testing.T, cfg Config, span time.Duration, ttft func(i int, at time.Duration) time.Duration) []runrecord.CapacityWindow {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	origin := time.Unix(2_000_000, 0)
	s.Start(origin)
	var pending []*record.Call
	i := 0
	for now := time.Duration(0); now <= span; now += 10 * time.Millisecond {
		for len(pending) > 0 && !pending[0].End.After(origin.Add(now)) {
			s.Finish(pending[0])
			pending = pending[1:]
		}
		s.Advance(origin.Add(now))
		for ; time.Duration(i)*50*time.Millisecond <= now; i++ {
			at := origin.Add(time.Duration(i) * 50 * time.Millisecond)
			d := ttft(i, at.Sub(origin))
			s.Claim(at, 0)
			c := &record.Call{Result: &stream.Result{OK: true, Start: at, End: at.Add(d + 100*time.Millisecond), TTFT: measure.Of(d),
				E2E: measure.Of(d + 100*time.Millisecond)}, Origin: record.Origin{Name: "c"}, Due: at}
			// Calls end in order of their end (a slow one after fast ones sent later).
			k := len(pending)
			for k > 0 && pending[k-1].End.After(c.End) {
				k--
			}
			pending = append(pending[:k], append([]*record.Call{c}, pending[k:]...)...)
		}
	}
	return s.Result().Windows
}

// The calls sent last in a window are judged like the others: a queue that
// builds up in the window's last second (every call from 9 s on waits
// 900 ms) keeps the window from passing, though the 140 calls before it
// were fast. (A cut of the window's end, as an earlier version made, left
// them out: only fast calls could have ended by the window's end.)
func TestTheCallsSentLastAreJudged(t *testing.T) {
	cfg := Config{Model: ModelRate, Min: 20, Max: 40, Window: 10 * time.Second,
		Objectives: objectives(t, map[string]string{"ttft": "p95<400ms"})}
	wins := drive(t, cfg, 40*time.Second, func(_ int, at time.Duration) time.Duration {
		if at >= 9*time.Second {
			return 900 * time.Millisecond
		}
		return 100 * time.Millisecond
	})
	require.NotEmpty(t, wins)
	w := wins[0]
	require.Equal(t, "fail", w.Verdict, w.Reason)
	// Every call sent from the warm-up's end (2 s) to the window's end is
	// in it, finished or not.
	span := w.EndS - w.StartS
	require.GreaterOrEqual(t, w.Calls+w.Censored, int(20*(10-2)), "span %.1f s", span)
}

// A level whose calls sit right at the limit (one in 20 past it, spread
// out) cannot be decided: the window is lengthened in steps of half a
// window up to its longest, then counts as a fail that says so.
func TestAnUndecidedWindowIsNeverAPass(t *testing.T) {
	cfg := Config{Model: ModelRate, Min: 20, Max: 40, Window: 10 * time.Second, MaxWindow: 30 * time.Second,
		Objectives: objectives(t, map[string]string{"ttft": "p95<400ms"})}
	wins := drive(t, cfg, 50*time.Second, func(i int, _ time.Duration) time.Duration {
		if i%20 == 0 {
			return 900 * time.Millisecond
		}
		return 100 * time.Millisecond
	})
	require.NotEmpty(t, wins)
	w := wins[0]
	require.Equal(t, "fail", w.Verdict)
	require.True(t, w.Undecided)
	require.True(t, w.Extended)
	require.Contains(t, w.Reason, "undecided: ttft p95<400ms (between")
	require.Contains(t, w.Reason, "still undecided at its longest (30s), so it counts as a fail")
	require.InDelta(t, 30, w.EndS-w.StartS, 1, "judged at its longest, once its calls ended")
	require.Len(t, w.Margins, 1)
	m := w.Margins[0]
	require.Equal(t, verdictUndecided, m.Verdict)
	require.NotNil(t, m.Lower)
	require.NotNil(t, m.Upper)
	require.LessOrEqual(t, *m.Lower, 400.0)
	require.Greater(t, *m.Upper, 400.0)
}

// A sustain window's fail makes its level a fail, whatever the shorter
// windows there said, and the search goes on below it: it refines when
// the bracket below is wide, sustains the level below when it is narrow.
func TestAFailedSustainSendsTheSearchBelow(t *testing.T) {
	l := levels{cfg: Config{Model: ModelRate, Min: 1, Max: 100, Precision: 0.1}}
	l.tried = append(l.tried,
		runrecord.CapacityWindow{Level: 4, Phase: phaseBracket, Verdict: "pass", Margin: -0.5},
		runrecord.CapacityWindow{Level: 8, Phase: phaseBracket, Verdict: "fail", Margin: 1},
		runrecord.CapacityWindow{Level: 5.66, Phase: phaseRefine, Verdict: "pass", Margin: -0.2},
		runrecord.CapacityWindow{Level: 6.73, Phase: phaseRefine, Verdict: "fail", Margin: 0.3},
	)
	level, phase, outcome := l.next(runrecord.CapacityWindow{Level: 6.17, Phase: phaseRefine, Verdict: "fail", Margin: 0.1})
	require.Empty(t, outcome)
	require.Equal(t, phaseSustain, phase, "5.66–6.17 is within 10 %%: sustain 5.66")
	require.Equal(t, 5.66, level)
	level, phase, outcome = l.next(runrecord.CapacityWindow{Level: 5.66, Phase: phaseSustain, Verdict: "fail", Margin: 0.05})
	require.Empty(t, outcome)
	require.Equal(t, phaseRefine, phase, "4–5.66 is wide: refine below")
	require.InDelta(t, 4.76, level, 0.01)
	level, phase, _ = l.next(runrecord.CapacityWindow{Level: level, Phase: phaseRefine, Verdict: "pass", Margin: -0.1})
	require.Equal(t, phaseRefine, phase)
	level, phase, _ = l.next(runrecord.CapacityWindow{Level: level, Phase: phaseRefine, Verdict: "pass", Margin: -0.05})
	require.Equal(t, phaseSustain, phase)
	_, _, outcome = l.next(runrecord.CapacityWindow{Level: level, Phase: phaseSustain, Verdict: "pass", Margin: -0.05})
	require.Equal(t, OutcomeFound, outcome)
	c := &runrecord.Capacity{}
	l.answer(c)
	require.InDelta(t, level, *c.Capacity, 1e-9)
	require.InDelta(t, 5.66, *c.FirstFail, 1e-9, "the level whose sustain failed is the first fail")
	require.NotNil(t, c.SustainedS)
}

// Two VUs that take credits due a microsecond apart may tell the search in
// the other order (bursty arrivals' gaps are often that short): each call's
// end still finds its own claim, so nothing stays in flight for ever (a
// call left there would be judged unfinished, and its count read as a
// queue still growing).
func TestClaimsToldOutOfOrderAreMatched(t *testing.T) {
	s, err := New(Config{Model: ModelRate, Min: 4, Max: 40, Window: 10 * time.Second,
		Objectives: objectives(t, map[string]string{"ttft": "p95<400ms"})})
	require.NoError(t, err)
	origin := time.Unix(2_000_000, 0)
	s.Start(origin)
	var calls []*record.Call
	for i := range 50 {
		at := origin.Add(3*time.Second + time.Duration(i)*100*time.Millisecond)
		early, late := at, at.Add(time.Microsecond)
		s.Claim(late, 0) // told first
		s.Claim(early, 0)
		for _, due := range []time.Time{early, late} {
			calls = append(calls, &record.Call{Result: &stream.Result{OK: true, Start: due, End: due.Add(50 * time.Millisecond),
				TTFT: measure.Of(20 * time.Millisecond), E2E: measure.Of(50 * time.Millisecond)}, Origin: record.Origin{Name: "c"}, Due: due})
		}
	}
	for _, c := range calls {
		s.Finish(c)
	}
	require.Zero(t, s.inflight)
	got, inflight := s.cur.calls(origin.Add(9 * time.Second))
	require.Zero(t, inflight)
	require.Len(t, got, 100)
}

// Near a capacity under random arrivals the share of calls past a limit
// is close to the limit's tail and they come in runs (a burst queues
// several in a row), so a window there needs many times the calls a pass
// needs. One whose calls lean to a pass (2.5 % past the limit, in runs of
// 8) is still undecided at the default longest (40 s here) and goes on,
// half a window at a time, until they decide; one that leans to a fail
// (7.5 %) stops there, since an undecided window already counts as a fail;
// and a maxWindow the script gives is the longest whatever the calls.
func TestAWindowLeaningToAPassGoesOnUntilItsCallsDecide(t *testing.T) {
	cfg := Config{Model: ModelRate, Min: 20, Max: 40, Window: 10 * time.Second,
		Objectives: objectives(t, map[string]string{"ttft": "p95<400ms"})}
	// Runs of 8 calls past the limit, every that many calls, the first
	// inside the window's first measured seconds.
	runsEvery := func(every int) func(int, time.Duration) time.Duration {
		return func(i int, _ time.Duration) time.Duration {
			if (i+every/2)%every < 8 {
				return 900 * time.Millisecond
			}
			return 100 * time.Millisecond
		}
	}
	s, err := New(cfg)
	require.NoError(t, err)
	require.Equal(t, 40*time.Second, s.Config().MaxWindow)
	w := drive(t, cfg, 240*time.Second, runsEvery(320))[0]
	require.Equal(t, "pass", w.Verdict, w.Reason)
	require.True(t, w.Extended)
	require.Greater(t, w.EndS-w.StartS, 40.0, "lengthened past the default longest")
	require.LessOrEqual(t, w.EndS-w.StartS, 160.0, "within maxCallsTimes default longests")

	w = drive(t, cfg, 240*time.Second, runsEvery(107))[0]
	require.Equal(t, "fail", w.Verdict)
	require.True(t, w.Undecided, w.Reason)
	require.Contains(t, w.Reason, "still undecided at its longest (40s)")

	cfg.MaxWindow = 40 * time.Second
	w = drive(t, cfg, 240*time.Second, runsEvery(320))[0]
	require.Equal(t, "fail", w.Verdict)
	require.Contains(t, w.Reason, "still undecided at its longest (40s)")
}

// A queue that shows in the calls in flight and the server's waiting count
// at once is named by both: which one crosses its test first at a check is a
// race on a busy machine (a late scrape), and the reason says what was seen.
func TestSaturationNamesEverySignOfTheQueue(t *testing.T) {
	line := func(from, step float64) []point {
		var pts []point
		for i := range 20 {
			x := float64(i) / 2
			pts = append(pts, point{x: x, y: from + step*x, known: x})
		}
		return pts
	}
	w := &window{start: time.Unix(1_000, 0)}
	w.warmEnd = w.start
	w.ttftPts = line(300, 200) // ms: from 0.3 s to past twice a 250 ms limit
	at := w.start.Add(10 * time.Second)
	sat, why := w.saturated(at, true, 250)
	require.False(t, sat, "TTFT alone is no queue: %s", why)
	w.waitPts = line(0, 3)
	sat, why = w.saturated(at, true, 250)
	require.True(t, sat)
	require.Equal(t, "over-saturated: TTFT and the server's waiting count rising", why)
	w.queuePts = line(32, 3)
	sat, why = w.saturated(at, true, 250)
	require.True(t, sat)
	require.Equal(t, "over-saturated: TTFT, calls in flight and the server's waiting count rising", why)
	sat, why = w.saturated(at, false, 250)
	require.True(t, sat)
	require.Equal(t, "over-saturated: TTFT and the server's waiting count rising", why, "the closed model's only queue sign")
}
