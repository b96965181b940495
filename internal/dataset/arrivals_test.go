package dataset

import (
	"math"
	"sync"
	"testing"
	"time"
)

// dispersion is variance / mean of arrival counts in windows of width w.
func dispersion(offsets []float64, w, duration float64) float64 {
	n := int(duration / w)
	counts := make([]float64, n)
	for _, t := range offsets {
		if i := int(t / w); i < n {
			counts[i]++
		}
	}
	var sum, sq float64
	for _, c := range counts {
		sum += c
	}
	mean := sum / float64(n)
	for _, c := range counts {
		sq += (c - mean) * (c - mean)
	}
	return sq / float64(n-1) / mean
}

func TestArrivalDispersion(t *testing.T) {
	const rate, duration, window = 20.0, 4000.0, 1.0 // 4000 windows of ~20 arrivals
	for _, c := range []struct {
		cv       float64
		min, max float64
	}{
		{1, 0.9, 1.1}, // Poisson: variance equals mean
		{0.5, 0.15, 0.4},
		{3, 4, 12}, // bursty: ~cv² = 9 for windows much longer than a gap
	} {
		for seed := uint64(1); seed <= 3; seed++ {
			a, err := NewArrivals(ArrivalOptions{Rate: rate, CV: c.cv, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			off, err := a.Offsets(duration)
			if err != nil {
				t.Fatal(err)
			}
			if got := float64(len(off)) / duration; math.Abs(got-rate) > 0.05*rate {
				t.Errorf("cv %v seed %d: rate %.2f, want %.0f", c.cv, seed, got, rate)
			}
			d := dispersion(off, window, duration)
			t.Logf("cv %v seed %d: dispersion index %.2f", c.cv, seed, d)
			if d < c.min || d > c.max {
				t.Errorf("cv %v seed %d: dispersion index %.2f, want in [%.2f, %.2f]", c.cv, seed, d, c.min, c.max)
			}
		}
	}
}

// VUs claiming from one process all together see its arrival times, each
// exactly once, on a fake clock.
func TestArrivalClaimsShareOneSequence(t *testing.T) {
	a, _ := NewArrivals(ArrivalOptions{Rate: 100, CV: 2, Seed: 4})
	start := time.Unix(0, 0)
	a.now = func() time.Time { return start }
	var mu sync.Mutex
	var got []time.Duration
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				d := a.Next()
				mu.Lock()
				got = append(got, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	st := a.Stats()
	if st.Claimed != 400 || st.Late != 0 {
		t.Fatalf("stats %+v", st)
	}
	ref, _ := NewArrivals(ArrivalOptions{Rate: 100, CV: 2, Seed: 4})
	ref.now = func() time.Time { return start }
	seen := map[time.Duration]int{}
	for _, d := range got {
		seen[d]++
	}
	for range 400 {
		d := ref.Next()
		if seen[d] == 0 {
			t.Fatalf("arrival at %v never claimed", d)
		}
		seen[d]--
	}
}

func TestArrivalsLateWhenBehind(t *testing.T) {
	a, _ := NewArrivals(ArrivalOptions{Rate: 10, Seed: 1})
	now := time.Unix(0, 0)
	a.now = func() time.Time { return now }
	a.Next()
	now = now.Add(10 * time.Second) // every VU was busy for 10 s
	for range 5 {
		if d := a.Next(); d != 0 {
			t.Fatalf("wait %v for an overdue arrival", d)
		}
	}
	if st := a.Stats(); st.Late != 5 || st.MaxLag < 9 {
		t.Fatalf("stats %+v", st)
	}
}

func TestArrivalsRejectBadOptions(t *testing.T) {
	for _, o := range []ArrivalOptions{{}, {Rate: -1}, {Rate: math.Inf(1)}, {Rate: 1, CV: -1}, {Rate: 1, CV: 100}} {
		if _, err := NewArrivals(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
