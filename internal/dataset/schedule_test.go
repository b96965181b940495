package dataset

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The guarantee the sampler documents: every prefix within 1 − 1/(2k−2) of the
// exact proportion, hence every window within 2, for many weight sets.
func TestScheduleDiscrepancy(t *testing.T) {
	sets := [][]float64{{3, 5, 1, 1}, {1, 1}, {1}, {7, 3}, {0.3, 0.7}, {1, 2, 3, 4, 5, 6}, {100, 1, 1}, {0.25, 0.25, 0.5}}
	r := rand.New(rand.NewPCG(1, 2))
	for range 40 {
		k := 2 + r.IntN(7)
		w := make([]float64, k)
		for i := range w {
			w[i] = float64(1 + r.IntN(20))
		}
		sets = append(sets, w)
	}
	for _, w := range sets {
		s, err := newSchedule(w)
		if err != nil {
			t.Fatal(err)
		}
		k := len(w)
		bound := 1.0
		if k > 1 {
			bound = 1 - 1/float64(2*k-2)
		}
		n := 3*s.period + 17
		counts := make([]int, k)
		prefix := make([][]int, n+1) // counts after t draws, for windows
		prefix[0] = make([]int, k)
		for d := int64(0); d < n; d++ {
			c, occ := s.at(uint64(d))
			if int(occ) != counts[c] {
				t.Fatalf("weights %v: draw %d occurrence %d, want %d", w, d, occ, counts[c])
			}
			counts[c]++
			prefix[d+1] = append([]int(nil), counts...)
			for i := range k {
				if dev := math.Abs(float64(d+1)*s.share(i) - float64(counts[i])); dev > bound+1e-9 {
					t.Fatalf("weights %v: after %d draws category %d deviates by %.3f > %.3f", w, d+1, i, dev, bound)
				}
			}
		}
		for _, win := range []int64{5, 10, 37, 100} {
			for start := int64(0); start+win <= n; start++ {
				for i := range k {
					got := float64(prefix[start+win][i] - prefix[start][i])
					if dev := math.Abs(got - float64(win)*s.share(i)); dev >= 2 {
						t.Fatalf("weights %v: window [%d,+%d) category %d has %v, want %.2f±2", w, start, win, i, got, float64(win)*s.share(i))
					}
				}
			}
		}
	}
}

func TestScheduleRejectsBadWeights(t *testing.T) {
	for _, w := range [][]float64{nil, {0, 1}, {-1, 2}, {math.NaN()}, {math.Inf(1)}} {
		if _, err := newSchedule(w); err == nil {
			t.Errorf("weights %v accepted", w)
		}
	}
}
