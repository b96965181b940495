package capacity

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// queueSim is a service with slots that each take service per call, FIFO:
// its capacity is slots/service calls per second. It drives a search on a
// fake clock, open (arrivals at the level's rate) or closed (level calls
// in flight).
type queueSim struct {
	slots   int
	service time.Duration
	prefill time.Duration // of service, before the first token
	tokens  int64
	jitter  func(i int) time.Duration // extra service time of call i (noise)
	// gaps draws the open model's gaps between arrivals, of mean 1 (a
	// queuesim.Process's); nil: constant arrivals.
	gaps func() float64
	// waiting feeds the search the count of calls waiting for a slot, as a
	// server's metrics read it, at every tick.
	waiting bool
	free    []time.Time    // when each slot is next free
	pending []*record.Call // calls not yet finished, by End
}

func (q *queueSim) serve(i int, due time.Time) *record.Call {
	k := 0
	for j := range q.free {
		if q.free[j].Before(q.free[k]) {
			k = j
		}
	}
	begin := due
	if q.free[k].After(begin) {
		begin = q.free[k]
	}
	svc := q.service
	if q.jitter != nil {
		svc += q.jitter(i)
	}
	end := begin.Add(svc)
	q.free[k] = end
	ttft := begin.Add(q.prefill).Sub(due)
	return &record.Call{Result: &stream.Result{OK: true, Start: due, End: end, TTFT: measure.Of(ttft), E2E: measure.Of(end.Sub(due)),
		TPOT: measure.Of((svc - q.prefill) / time.Duration(q.tokens-1)), OutputTokens: q.tokens}, Origin: record.Origin{Name: "c"}, Due: due}
}

// waitingAt counts the calls that have not yet begun their service at now.
func (q *queueSim) waitingAt(now time.Time) int {
	n := 0
	for _, c := range q.pending {
		if c.Start.Add(c.TTFT.Or(0) - q.prefill).After(now) {
			n++
		}
	}
	return n
}

// run drives s until it is done or limit passes; it returns the result's
// capacity (NaN when none).
func (q *queueSim) run(t *testing.T, s *Search, limit time.Duration) {
	q.runEvery(t, s, limit, 5*time.Millisecond)
}

func (q *queueSim) runEvery(t *testing.T, s *Search, limit, tick time.Duration) {
	t.Helper()
	q.free = make([]time.Time, q.slots)
	origin := time.Unix(1_000_000, 0)
	s.Start(origin)
	var nextArrival time.Time
	inflight := 0
	for now, i := origin, 0; now.Sub(origin) < limit; now = now.Add(tick) {
		for len(q.pending) > 0 {
			first := 0
			for j, c := range q.pending {
				if c.End.Before(q.pending[first].End) {
					first = j
				}
			}
			c := q.pending[first]
			if c.End.After(now) {
				break
			}
			q.pending = append(q.pending[:first], q.pending[first+1:]...)
			inflight--
			s.Finish(c)
		}
		if q.waiting {
			s.Waiting(now, float64(q.waitingAt(now)))
		}
		st := s.Advance(now)
		if st.Done {
			return
		}
		if st.Draining {
			nextArrival = time.Time{}
			continue
		}
		if s.cfg.Model == ModelRate {
			if nextArrival.IsZero() {
				nextArrival = now
			}
			for !nextArrival.After(now) {
				s.Claim(nextArrival, now.Sub(nextArrival))
				q.pending = append(q.pending, q.serve(i, nextArrival))
				i++
				gap := 1.0
				if q.gaps != nil {
					gap = q.gaps()
				}
				nextArrival = nextArrival.Add(time.Duration(gap * float64(time.Second) / st.Level))
			}
			continue
		}
		for inflight < int(st.Level) {
			s.Claim(now, 0)
			c := q.serve(i, now)
			c.Due = time.Time{}
			q.pending = append(q.pending, c)
			inflight++
			i++
		}
	}
	t.Fatalf("the search did not end within %v: %+v", limit, s.Result())
}

func objectives(t *testing.T, slo map[string]string) []Objective {
	t.Helper()
	o, err := ParseObjectives("slo", "", slo)
	require.NoError(t, err)
	return o
}

func TestOpenSearchFindsAQueuesCapacity(t *testing.T) {
	// 4 slots × 0.5 s per call: 8 calls/s. Below it a call waits for no
	// slot (constant arrivals); above it the queue grows without bound.
	q := &queueSim{slots: 4, service: 500 * time.Millisecond, prefill: 20 * time.Millisecond, tokens: 50}
	s, err := New(Config{Model: ModelRate, Min: 1, Max: 64, Window: 10 * time.Second,
		Objectives: objectives(t, map[string]string{"ttft": "p95<300ms", "errors": "<5%"})})
	require.NoError(t, err)
	q.run(t, s, time.Hour)
	dump(t, s)
	c := s.Result()
	require.Equal(t, OutcomeFound, c.Outcome, String(c))
	require.NotNil(t, c.Capacity)
	require.InDelta(t, 8, *c.Capacity, 0.8, String(c))
	require.LessOrEqual(t, len(c.Windows), 16)
	require.Equal(t, "ttft p95<300ms", c.Binding)
	require.Equal(t, "cliff", c.Boundary)
	require.InDelta(t, 0.8**c.Capacity, *c.Recommended, 1e-9)
	early := 0
	for _, w := range c.Windows {
		if w.Verdict == "fail" {
			require.NotEmpty(t, w.Reason)
		}
		if w.EarlyStopS != nil {
			early++
			require.InDelta(t, w.EndS-w.StartS, *w.EarlyStopS, 1e-9)
			require.Contains(t, w.Reason, "over-saturated")
		}
	}
	require.Positive(t, early, "a window far past the capacity stops early")
	last := c.Windows[len(c.Windows)-1]
	require.Equal(t, "sustain", last.Phase, "the answer is sustained before it is given")
	require.Equal(t, *c.Capacity, last.Level)
	require.NotNil(t, c.SustainedS)
	require.InDelta(t, 60, *c.SustainedS, 1e-9)
	require.Contains(t, String(c), "(each objective 95 % sure to hold at it; sustained 60 s)")
	require.NotNil(t, last.Throughput)
	require.NotNil(t, last.OutputTokensSec)
	require.InDelta(t, 50**last.Throughput, *last.OutputTokensSec, 1e-6)
}

func TestClosedSearchFindsTheSlots(t *testing.T) {
	// 6 slots: a seventh call in flight waits a whole service time.
	q := &queueSim{slots: 6, service: 400 * time.Millisecond, prefill: 10 * time.Millisecond, tokens: 40}
	s, err := New(Config{Model: ModelConcurrency, Min: 1, Max: 64, Window: 8 * time.Second,
		Objectives: objectives(t, map[string]string{"ttft": "p95<200ms"})})
	require.NoError(t, err)
	q.run(t, s, time.Hour)
	dump(t, s)
	c := s.Result()
	require.Equal(t, OutcomeFound, c.Outcome, String(c))
	require.Equal(t, 6.0, *c.Capacity, String(c))
	require.Equal(t, 7.0, *c.FirstFail)
	require.Equal(t, 4.0, *c.Recommended) // floor(0.8 × 6)
}

func TestSearchEdgesOfTheRange(t *testing.T) {
	q := &queueSim{slots: 2, service: 500 * time.Millisecond, prefill: 10 * time.Millisecond, tokens: 10}
	s, err := New(Config{Model: ModelRate, Min: 8, Max: 64, Window: 8 * time.Second,
		Objectives: objectives(t, map[string]string{"ttft": "p95<300ms"})})
	require.NoError(t, err)
	q.run(t, s, time.Hour)
	dump(t, s)
	c := s.Result()
	require.Equal(t, OutcomeBelowMin, c.Outcome)
	require.Nil(t, c.Capacity)
	require.Contains(t, String(c), "capacity below min")

	q = &queueSim{slots: 64, service: 100 * time.Millisecond, prefill: 10 * time.Millisecond, tokens: 10}
	s, err = New(Config{Model: ModelRate, Min: 1, Max: 8, Window: 8 * time.Second,
		Objectives: objectives(t, map[string]string{"ttft": "p95<300ms"})})
	require.NoError(t, err)
	q.run(t, s, time.Hour)
	c = s.Result()
	require.Equal(t, OutcomeAboveMax, c.Outcome)
	require.Equal(t, 8.0, *c.Capacity)
	require.Contains(t, String(c), "capacity above max")
	require.Len(t, c.Windows, 5) // 1, 2, 4, 8, then 8 sustained
	require.Equal(t, "sustain", c.Windows[4].Phase)
}

func TestNoisyServiceStaysNearTheCapacity(t *testing.T) {
	// Service times vary by ±20 % (deterministic pseudo-noise): the answer
	// still lands within 10 % of slots / mean service.
	q := &queueSim{slots: 8, service: 400 * time.Millisecond, prefill: 20 * time.Millisecond, tokens: 40,
		jitter: func(i int) time.Duration {
			return time.Duration(math.Sin(float64(i)*12.9898)*0.2*400) * time.Millisecond
		}}
	s, err := New(Config{Model: ModelRate, Min: 2, Max: 100, Window: 10 * time.Second,
		Objectives: objectives(t, map[string]string{"ttft": "p95<1s", "e2e": "p99<2s"})})
	require.NoError(t, err)
	q.run(t, s, time.Hour)
	dump(t, s)
	c := s.Result()
	require.Equal(t, OutcomeFound, c.Outcome, String(c))
	require.InDelta(t, 20, *c.Capacity, 2, String(c))
}

func TestSearchIsAFunctionOfItsEvents(t *testing.T) {
	// Advancing every 5 ms or every 50 ms (calls' ends reported up to
	// 50 ms late) gives the same windows: the verdicts read each event's
	// own time, not when the search heard of it.
	build := func() *Search {
		s, err := New(Config{Model: ModelRate, Min: 1, Max: 64, Window: 8 * time.Second,
			Objectives: objectives(t, map[string]string{"ttft": "p95<300ms"})})
		require.NoError(t, err)
		return s
	}
	a, b := build(), build()
	(&queueSim{slots: 3, service: 500 * time.Millisecond, prefill: 20 * time.Millisecond, tokens: 20}).run(t, a, 10*time.Minute)
	(&queueSim{slots: 3, service: 500 * time.Millisecond, prefill: 20 * time.Millisecond, tokens: 20}).runEvery(t, b, 10*time.Minute, 50*time.Millisecond)
	ra, rb := a.Result(), b.Result()
	require.Equal(t, OutcomeFound, ra.Outcome)
	require.Equal(t, len(ra.Windows), len(rb.Windows))
	for i := range ra.Windows {
		require.Equal(t, ra.Windows[i].Level, rb.Windows[i].Level)
		require.Equal(t, ra.Windows[i].Verdict, rb.Windows[i].Verdict)
	}
}

func dump(t *testing.T, s *Search) {
	for _, w := range s.Result().Windows {
		t.Logf("%d %s L=%.3g %s %q calls=%d cens=%d m=%.2f [%.1f-%.1f]", w.Index, w.Phase, w.Level, w.Verdict, w.Reason, w.Calls, w.Censored, w.Margin, w.StartS, w.EndS)
	}
}

func rowsOf(margins map[float64]float64) []runrecord.CapacityWindow {
	var rows []runrecord.CapacityWindow
	for _, l := range []float64{4, 8, 6, 5} {
		if m, ok := margins[l]; ok {
			rows = append(rows, runrecord.CapacityWindow{Level: l, Margin: m})
		}
	}
	return rows
}

// After an overloaded window the next one opens once the calls in flight
// are what its own level keeps without a queue: the least queued pass
// scaled to that level, not the last pass's in flight. A pass just under
// the capacity already carries a queue (12 in flight at 20 req/s where 0.4 s
// calls need 8), and a window opened on that backlog fails where it need not.
func TestDrainWaitsForTheNextLevelsOwnBacklog(t *testing.T) {
	pass := func(level float64, inflight ...float64) *window {
		w := &window{level: level}
		for _, y := range inflight {
			w.queuePts = append(w.queuePts, point{y: y})
		}
		return w
	}
	var s Search
	require.Equal(t, 1, calmFor(s.perLevel, 17), "before any pass: drain to one call")
	s.notePass(pass(12, 4, 5, 5, 5.2)) // 4.8 in flight at 12 req/s: 0.4 s each, no queue
	near := pass(20.2, 11, 12, 13)     // near the capacity: a queue
	s.notePass(near)
	require.InDelta(t, 0.4, s.perLevel, 1e-9)
	require.Equal(t, 8, calmFor(s.perLevel, 17), "17 req/s × 0.4 s = 6.8 in flight, plus one")
	require.Equal(t, 12.0, meanInFlight(near), "the last pass alone would have let 13 in flight open the window")
}

// A long decode hides a growing queue from the client: at 15 % past the
// capacity of 32 slots × 2 s calls, the queue grows by 2.4 calls a second,
// so TTFT climbs steadily while the calls in flight (32 running plus the
// queue) rise slowly against their own level. The server's waiting count,
// starting near 0, shows the queue itself: fed as a server's metrics give
// it, it ends the window as over-saturated once TTFT is twice past its
// limit (2 × 250 ms), before the window's end, where without it the calls'
// bounds judge the window.
func TestServersWaitingCountEndsAWindow(t *testing.T) {
	first := func(waiting bool) runrecord.CapacityWindow {
		q := &queueSim{slots: 32, service: 2 * time.Second, prefill: 100 * time.Millisecond, tokens: 10, waiting: waiting}
		s, err := New(Config{Model: ModelRate, Min: 18.4, Max: 100, Window: 10 * time.Second,
			Objectives: objectives(t, map[string]string{"ttft": "p95<250ms"})})
		require.NoError(t, err)
		q.run(t, s, time.Hour)
		dump(t, s)
		return s.Result().Windows[0]
	}
	with := first(true)
	require.Equal(t, "over-saturated: TTFT and the server's waiting count rising", with.Reason)
	require.NotNil(t, with.EarlyStopS)
	without := first(false)
	require.NotContains(t, without.Reason, "waiting count")
	if without.EarlyStopS != nil {
		require.Greater(t, *without.EarlyStopS, *with.EarlyStopS, "without the waiting count the window ran longer")
	}
}
