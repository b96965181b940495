package dataset

import (
	"testing"
)

func benchDataset(b *testing.B, o SyntheticOptions) *Dataset {
	b.Helper()
	d, err := Synthetic(o)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkNext: one draw from many goroutines (the shared atomic counter is
// the only contended state).
func BenchmarkNext(b *testing.B) {
	d := benchDataset(b, SyntheticOptions{Seed: 1, Variants: 4})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = d.Next()
		}
	})
}

// BenchmarkNextCacheBust adds the nonce: a copy of the messages and a token
// count of the nonce on every draw.
func BenchmarkNextCacheBust(b *testing.B) {
	d := benchDataset(b, SyntheticOptions{Seed: 1, Variants: 4, CacheBust: true})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = d.Next()
		}
	})
}

// BenchmarkSynthetic10k builds 10 000 items (2 500 per built-in category, so
// 2 500 long-context prompts of 2 000-4 000 tokens). Run with -benchtime=1x.
func BenchmarkSynthetic10k(b *testing.B) {
	for range b.N {
		d := benchDataset(b, SyntheticOptions{Seed: uint64(b.N), Variants: 2500})
		if d.Size() != 10_000 {
			b.Fatalf("%d items", d.Size())
		}
	}
}

// BenchmarkSynthetic10kShort is the same count without the long classes.
func BenchmarkSynthetic10kShortMedium(b *testing.B) {
	for range b.N {
		d := benchDataset(b, SyntheticOptions{Seed: uint64(b.N), Variants: 5000,
			Mix: map[string]float64{"short": 1, "medium": 1}})
		if d.Size() != 10_000 {
			b.Fatalf("%d items", d.Size())
		}
	}
}
