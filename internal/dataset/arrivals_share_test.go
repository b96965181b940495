package dataset

import (
	"math"
	"slices"
	"testing"
	"time"
)

// Instances on execution segments together run the one configured process:
// merged, their arrivals are the single instance's arrivals, at the same
// times, so the union has the configured rate and dispersion (Poisson stays
// Poisson, bursts stay bursts), and each instance runs its fraction.
func TestSplitArrivalsAddUpToTheWholeProcess(t *testing.T) {
	const rate, duration = 20.0, 2000.0
	for _, c := range []struct{ cv, min, max float64 }{{1, 0.9, 1.1}, {3, 4, 12}} {
		cv := c.cv
		a, err := NewArrivals(ArrivalOptions{Rate: rate, CV: cv, Seed: 11})
		if err != nil {
			t.Fatal(err)
		}
		single, _ := a.Offsets(duration)
		dSingle := dispersion(single, 1, duration)
		for _, sequence := range []string{"0,1/2,1", "0,1/3,2/3,1", "0,1/4,1/2,1"} {
			var union []float64
			for _, s := range k6Shares(t, sequence) {
				off, err := a.Part(s).Offsets(duration)
				if err != nil {
					t.Fatal(err)
				}
				if want := s.Fraction() * float64(len(single)); math.Abs(float64(len(off))-want) > 1 {
					t.Errorf("cv %v %s: segment %s has %d arrivals, want %.0f", cv, sequence, s.Segment(), len(off), want)
				}
				union = append(union, off...)
			}
			slices.Sort(union)
			if !slices.Equal(union, single) {
				t.Fatalf("cv %v %s: the instances' %d arrivals are not the single instance's %d", cv, sequence, len(union), len(single))
			}
			d := dispersion(union, 1, duration)
			t.Logf("cv %v %s: %d arrivals, dispersion %.2f (single instance %.2f)", cv, sequence, len(union), d, dSingle)
			if d < c.min || d > c.max {
				t.Errorf("cv %v %s: union dispersion %.2f, want in [%.2f, %.2f]", cv, sequence, d, c.min, c.max)
			}
		}
	}
}

// An instance's VUs claiming arrivals get its share of the schedule, at the
// times Offsets lists, and its stats say which segment it runs.
func TestSplitArrivalClaimsFollowTheShare(t *testing.T) {
	a, _ := NewArrivals(ArrivalOptions{Rate: 50, Seed: 2})
	start := time.Unix(0, 0)
	a.now = func() time.Time { return start }
	s := k6Shares(t, "0,1/3,2/3,1")[2]
	p := a.Part(s)
	if a.Part(s) != p || a.Part(Share{}) != a {
		t.Fatal("a share's process is built twice: two clocks")
	}
	want, _ := p.Offsets(10)
	for i, at := range want {
		if got := p.Next(); math.Abs(got.Seconds()-at) > 1e-6 {
			t.Fatalf("claim %d waits %v, the schedule says %.6fs", i, got, at)
		}
	}
	st := p.Stats()
	if st.Claimed != uint64(len(want)) || st.Segment != "2/3:1" || st.Share != 1.0/3 || st.Rate != 50 {
		t.Fatalf("stats %+v", st)
	}
	if a.Stats().Claimed != 0 || a.Stats().Segment != "0:1" {
		t.Fatalf("the whole test's process was advanced: %+v", a.Stats())
	}
}
