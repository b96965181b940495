package schedule

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

func seqs(cs []Credit) []uint64 {
	out := make([]uint64, len(cs))
	for i, c := range cs {
		out[i] = c.Seq
	}
	return out
}

func TestConstantPlanIsEvenAndEndsAtDuration(t *testing.T) {
	s, err := Constant(Options{Rate: 1000, Duration: 50 * time.Millisecond})
	require.NoError(t, err)
	p := s.Plan(time.Hour, 1000)
	require.Len(t, p, 50)
	for i, c := range p {
		require.Equal(t, uint64(i), c.Seq)
		require.Equal(t, time.Duration(i)*time.Millisecond, c.Offset)
	}
}

func TestNextHandsOutEveryCreditOnceAcrossVUs(t *testing.T) {
	s, err := Poisson(Options{Rate: 2000, Duration: 150 * time.Millisecond}, 7)
	require.NoError(t, err)
	want := seqs(s.Plan(time.Hour, 1_000_000))
	var mu sync.Mutex
	var got []uint64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				c, err := s.Next(context.Background())
				if err != nil {
					require.ErrorIs(t, err, ErrOver)
					return
				}
				mu.Lock()
				got = append(got, c.Seq)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(got)
	require.Equal(t, want, got, "every credit is claimed, once")
	st := s.Stats()
	require.Equal(t, uint64(len(want)), st.Claimed)
	require.Zero(t, st.Dropped)
	require.True(t, st.Over)
}

func TestCreditsNobodyClaimedAreDropped(t *testing.T) {
	s, err := Constant(Options{Rate: 1000, Duration: 100 * time.Millisecond})
	require.NoError(t, err)
	for range 10 {
		_, err := s.Next(context.Background())
		require.NoError(t, err)
	}
	time.Sleep(150 * time.Millisecond)
	st := s.Stats()
	require.Equal(t, uint64(10), st.Claimed)
	require.Equal(t, uint64(90), st.Dropped, "the 90 credits due within the duration and never claimed")
	// A late claim takes the oldest owed credit and says how late it is.
	late := st.Late
	c, err := s.Next(context.Background())
	require.NoError(t, err)
	require.Equal(t, uint64(10), c.Seq)
	require.Greater(t, c.Lag, 100*time.Millisecond)
	require.Equal(t, late+1, s.Stats().Late)
	require.Equal(t, uint64(89), s.Stats().Dropped)
}

func TestDroppedCountStopsWhenTheTestStops(t *testing.T) {
	s, err := Constant(Options{Rate: 1000, Duration: time.Hour})
	require.NoError(t, err)
	_, err = s.Next(context.Background())
	require.NoError(t, err)
	time.Sleep(30 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.Next(ctx)
	require.ErrorIs(t, err, context.Canceled)
	d1 := s.Stats().Dropped
	require.GreaterOrEqual(t, d1, uint64(25))
	time.Sleep(30 * time.Millisecond)
	require.Equal(t, d1, s.Stats().Dropped, "credits due after the test stopped are not owed")
}

// share builds the k6 striping of n equal instances (k6's striped offsets
// for a sequence 0,1/n,…,1 put instance i at position i of every cycle of n).
func share(t *testing.T, i, n int) dataset.Share {
	t.Helper()
	sh, err := dataset.NewShare("seg", "seq", int64(i), []int64{int64(n)}, int64(n))
	require.NoError(t, err)
	return sh
}

func TestPartsTogetherAreTheWholeSchedule(t *testing.T) {
	for _, mk := range []func() (*Schedule, error){
		func() (*Schedule, error) { return Gamma(Options{Rate: 50, Duration: 10 * time.Second}, 3, 1) },
		func() (*Schedule, error) {
			return Offsets(FixedTimes([]float64{0, 0, 0.5, 0.7, 2, 2.25, 3}), true, Options{Rate: 2, Duration: 10 * time.Second})
		},
	} {
		whole, err := mk()
		require.NoError(t, err)
		all := whole.Plan(time.Hour, 1_000_000)
		require.NotEmpty(t, all)
		// Uneven too: one instance takes two positions of a cycle of four.
		uneven := []dataset.Share{}
		for _, c := range []struct {
			start int64
			offs  []int64
		}{{0, []int64{4}}, {1, []int64{1, 3}}, {3, []int64{4}}} {
			sh, err := dataset.NewShare("seg", "seq", c.start, c.offs, 4)
			require.NoError(t, err)
			uneven = append(uneven, sh)
		}
		for _, shares := range [][]dataset.Share{{share(t, 0, 2), share(t, 1, 2)},
			{share(t, 0, 3), share(t, 1, 3), share(t, 2, 3)}, uneven} {
			var union []Credit
			for _, sh := range shares {
				s, err := mk()
				require.NoError(t, err)
				union = append(union, s.Part(sh).Plan(time.Hour, 1_000_000)...)
			}
			slices.SortFunc(union, func(a, b Credit) int { return int(a.Seq) - int(b.Seq) }) //nolint:gosec // small
			require.Equal(t, all, union, "%s: the instances' credits are the whole schedule's, due at the same times", whole.Kind())
		}
	}
}

func TestSetRateMovesCreditsNotYetDue(t *testing.T) {
	s, err := Constant(Options{Rate: 10, Duration: 3 * time.Second})
	require.NoError(t, err)
	at, err := s.SetRate(20, time.Second)
	require.NoError(t, err)
	require.Equal(t, time.Second, at)
	p := s.Plan(time.Hour, 1000)
	require.Len(t, p, 10+40, "10/s for 1 s, then 20/s for 2 s")
	require.Equal(t, time.Second, p[10].Offset)
	require.Equal(t, time.Second+50*time.Millisecond, p[11].Offset)
	require.InDelta(t, 20, s.Rate(2*time.Second), 0)
	require.InDelta(t, 10, s.Rate(0), 0)
	_, err = s.SetRate(0, 0)
	require.Error(t, err)
}

func TestSetRateWakesTheWaitingVU(t *testing.T) {
	s, err := Constant(Options{Rate: 1, Duration: time.Hour})
	require.NoError(t, err)
	_, err = s.Next(context.Background()) // starts the clock; the next credit is due in 1 s
	require.NoError(t, err)
	got := make(chan Credit)
	go func() {
		c, err := s.Next(context.Background())
		if err == nil {
			got <- c
		}
	}()
	time.Sleep(20 * time.Millisecond)
	at, err := s.SetRate(1000, 0)
	require.NoError(t, err)
	require.Greater(t, at, time.Duration(0), "the change cannot reach back before now")
	select {
	case c := <-got:
		require.Less(t, c.Offset, 500*time.Millisecond)
	case <-time.After(900 * time.Millisecond):
		t.Fatal("the waiting VU kept the old due time")
	}
}

func TestGammaKeepsItsRateAndBurstiness(t *testing.T) {
	s, err := Gamma(Options{Rate: 100, Duration: 2000 * time.Second}, 3, 42)
	require.NoError(t, err)
	p := s.Plan(time.Hour, 1_000_000)
	n := float64(len(p))
	require.InEpsilon(t, 200_000, n, 0.05)
	var sum, sq float64
	for i := 1; i < len(p); i++ {
		g := (p[i].Offset - p[i-1].Offset).Seconds()
		sum += g
		sq += g * g
	}
	mean := sum / (n - 1)
	cv := math.Sqrt(sq/(n-1)-mean*mean) / mean
	require.InEpsilon(t, 3, cv, 0.1)
}

func TestOffsetsReplayScaledAndLooped(t *testing.T) {
	s, err := Offsets(FixedTimes([]float64{10, 10.5, 12}), true, Options{Rate: 2, Duration: 3 * time.Second})
	require.NoError(t, err)
	var offs []time.Duration
	for _, c := range s.Plan(time.Hour, 100) {
		offs = append(offs, c.Offset)
	}
	// rows at 0, 0.5, 2 trace seconds; the loop restarts a mean gap (1 s)
	// after the last row; twice as fast.
	ms := time.Millisecond
	require.Equal(t, []time.Duration{0, 250 * ms, 1000 * ms, 1500 * ms, 1750 * ms, 2500 * ms}, offs)
	once, err := Offsets(FixedTimes([]float64{1, 2}), false, Options{})
	require.NoError(t, err)
	require.Len(t, once.Plan(time.Hour, 100), 2)
	_, err = Offsets(FixedTimes(nil), false, Options{})
	require.Error(t, err)
	_, err = Offsets(FixedTimes([]float64{1}), true, Options{})
	require.ErrorContains(t, err, "duration")
}

func TestBadOptions(t *testing.T) {
	_, err := Constant(Options{Rate: 0, Duration: time.Second})
	require.ErrorContains(t, err, "rate")
	_, err = Poisson(Options{Rate: 1}, 1)
	require.ErrorContains(t, err, "duration")
	_, err = Gamma(Options{Rate: 1, Duration: time.Second}, 0, 1)
	require.ErrorContains(t, err, "cv")
}

// Abandon hands every owed credit over once, across VUs, and only this
// instance's; the count of dropped credits does not change by it.
func TestAbandonHandsEachDroppedCreditOverOnce(t *testing.T) {
	whole, err := Constant(Options{Rate: 1000, Duration: 100 * time.Millisecond})
	require.NoError(t, err)
	s := whole.Part(share(t, 1, 2))
	require.Nil(t, s.Abandon(), "before the first claim nothing is owed")
	for range 5 {
		_, err := s.Next(context.Background())
		require.NoError(t, err)
	}
	time.Sleep(150 * time.Millisecond)
	before := s.Stats().Dropped
	require.Equal(t, uint64(45), before, "this instance's 50 credits, 5 claimed")
	var mu sync.Mutex
	var got []Credit
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			cs := s.Abandon()
			mu.Lock()
			got = append(got, cs...)
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Len(t, got, 45, "each dropped credit once, whichever VU asked")
	for _, c := range got {
		require.Equal(t, uint64(1), c.Seq%2, "only this instance's share")
		require.Less(t, c.Offset, 100*time.Millisecond)
		require.False(t, c.Due.IsZero())
	}
	require.Equal(t, before, s.Stats().Dropped, "handed over, still dropped")
	_, err = s.Next(context.Background())
	require.ErrorIs(t, err, ErrOver)
}

// A credit that is merely late is not dropped: Abandon at the stop takes
// only what is due before it, and a late claim before it is a claim.
func TestAbandonLeavesCreditsDueAfterTheStop(t *testing.T) {
	s, err := Constant(Options{Rate: 100, Duration: time.Hour})
	require.NoError(t, err)
	_, err = s.Next(context.Background())
	require.NoError(t, err)
	time.Sleep(55 * time.Millisecond)
	c, err := s.Next(context.Background())
	require.NoError(t, err)
	require.Positive(t, c.Lag, "late, and claimed")
	got := s.Abandon()
	require.NotEmpty(t, got)
	require.Less(t, len(got), 10, "credits due in the next hour are not owed")
	require.Equal(t, uint64(len(got)), s.Stats().Dropped)
	time.Sleep(30 * time.Millisecond)
	require.Empty(t, s.Abandon(), "the stop is when the first Abandon came")
	require.Equal(t, uint64(len(got)), s.Stats().Dropped)
}

// A clone of a trace's source reads on from the same row, and reading it
// does not move the original (the look-ahead that counts dropped credits).
func TestOffsetSourceCloneReadsOnAlone(t *testing.T) {
	src := newOffsetSource(FixedTimes([]float64{0, 1, 2, 3}), true)
	for range 5 {
		src.next()
	}
	c := src.clone()
	var a, b []float64
	for range 6 {
		p, _ := c.next()
		b = append(b, p)
	}
	for range 6 {
		p, _ := src.next()
		a = append(a, p)
	}
	require.Equal(t, a, b)
	require.Equal(t, []float64{5, 6, 7, 8, 9, 10}, a, "rows 1–3, then the loop one mean gap (1 s) after the last")
}

// A held schedule hands out nothing and owes nothing, however long the hold
// lasts (past the schedule's duration at the held speed's pace), and goes on
// from the position it stopped at: a trace resumes where it was held.
func TestHoldStopsTheClockAndResumesWhereItStopped(t *testing.T) {
	s, err := Offsets(FixedTimes([]float64{0, 1, 2, 3}), true, Options{Rate: 1, Duration: 24 * time.Hour})
	require.NoError(t, err)
	clock := time.Unix(1_000_000, 0)
	s.now = func() time.Time { return clock }
	ctx := context.Background()
	c, err := s.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(0), c.Seq)
	clock = clock.Add(1500 * time.Millisecond)
	c, err = s.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(1), c.Seq)
	require.Equal(t, 1500*time.Millisecond, s.Hold(0), "a hold takes effect now, not behind it")

	clock = clock.Add(time.Hour)
	require.Zero(t, s.Stats().Dropped, "nothing falls due while held")
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = s.Next(short)
	require.ErrorIs(t, err, context.DeadlineExceeded, "a held schedule hands out nothing, and is not over")

	at, err := s.SetRate(2, 0)
	require.NoError(t, err)
	require.Equal(t, time.Hour+1500*time.Millisecond, at)
	clock = clock.Add(250 * time.Millisecond)
	c, err = s.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(2), c.Seq)
	require.Equal(t, time.Hour+1750*time.Millisecond, c.Offset, "half a trace second left at twice the speed")
	require.Zero(t, c.Lag)
}

// A trace's parts stay its exact shares through the speed changes and holds
// a capacity search makes: the same changes at the same offsets on every
// instance give the whole schedule's credits, each on one instance, due at
// the same times, and nothing due while held.
func TestPartsThroughSpeedChangesAndAHoldAreTheWhole(t *testing.T) {
	times := FixedTimes([]float64{0, 0, 0.5, 0.7, 2, 2.25, 3})
	steer := func(s *Schedule) *Schedule {
		_, _ = s.SetRate(3, 2*time.Second)
		s.Hold(4 * time.Second)
		_, _ = s.SetRate(0.5, 10*time.Second)
		return s
	}
	whole, err := Offsets(times, true, Options{Rate: 1, Duration: time.Hour})
	require.NoError(t, err)
	all := steer(whole).Plan(30*time.Second, 1_000_000)
	require.NotEmpty(t, all)
	for _, c := range all {
		require.False(t, c.Offset > 4*time.Second && c.Offset < 10*time.Second, "nothing is due while held: %v", c.Offset)
	}
	var union []Credit
	for _, sh := range []dataset.Share{share(t, 0, 3), share(t, 1, 3), share(t, 2, 3)} {
		s, err := Offsets(times, true, Options{Rate: 1, Duration: time.Hour})
		require.NoError(t, err)
		union = append(union, steer(s.Part(sh)).Plan(30*time.Second, 1_000_000)...)
	}
	slices.SortFunc(union, func(a, b Credit) int { return int(a.Seq) - int(b.Seq) }) //nolint:gosec // small
	require.Equal(t, all, union)
}
