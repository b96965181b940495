package report

import (
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// Bucket is one slice of wall time (1 s at first; wider after merging).
// Calls count in the bucket where they started, except completions and output
// tokens, which count where they ended (that is when throughput happens).
type Bucket struct {
	Requests, Failures uint64 // calls started in this bucket
	Completed          uint64 // calls that ended in this bucket
	OutputTokens       int64  // output tokens of calls that ended in this bucket
	ActiveMax          int    // most streams in flight seen at a call start
	// ClassMin/ClassMax are the load-level classes of the calls started here
	// (0,0 when none started); LevelMax the highest level (VUs or req/s).
	ClassMin, ClassMax int
	LevelMax           float64

	TTFT, Gap, TokensPerSec *sketch.Sketch // coarse sketches, nil until used
	// ShortTTFT holds TTFTs of short-prompt calls started here, LongPrefill the
	// seconds of long-prompt prefill (start → first token) overlapping this
	// bucket: together they show whether long prompts block short ones.
	ShortTTFT   *sketch.Sketch
	LongPrefill float64
	// GapsUnsampled is how many of the gaps in Gap the gapSampleRate cap
	// kept out of k6's llm_inter_token_gap: the share each stretch of the
	// test was kept at (gap_sample_note.go).
	GapsUnsampled uint64
}

func (b *Bucket) merge(o *Bucket) {
	if o.Requests > 0 || o.Completed > 0 {
		if b.Requests == 0 || (o.Requests > 0 && o.ClassMin < b.ClassMin) {
			b.ClassMin = o.ClassMin
		}
		b.ClassMax = max(b.ClassMax, o.ClassMax)
		b.LevelMax = max(b.LevelMax, o.LevelMax)
	}
	b.Requests += o.Requests
	b.Failures += o.Failures
	b.Completed += o.Completed
	b.OutputTokens += o.OutputTokens
	b.ActiveMax = max(b.ActiveMax, o.ActiveMax)
	b.LongPrefill += o.LongPrefill
	b.GapsUnsampled += o.GapsUnsampled
	b.TTFT = mergeCoarse(b.TTFT, o.TTFT)
	b.Gap = mergeCoarse(b.Gap, o.Gap)
	b.TokensPerSec = mergeCoarse(b.TokensPerSec, o.TokensPerSec)
	b.ShortTTFT = mergeCoarse(b.ShortTTFT, o.ShortTTFT)
}

func mergeCoarse(a, b *sketch.Sketch) *sketch.Sketch {
	if b == nil {
		return a
	}
	if a == nil {
		return b.Clone()
	}
	_ = a.Merge(b)
	return a
}

func (b *Bucket) clone() Bucket {
	c := *b
	for _, p := range []**sketch.Sketch{&c.TTFT, &c.Gap, &c.TokensPerSec, &c.ShortTTFT} {
		if *p != nil {
			*p = (*p).Clone()
		}
	}
	return c
}

func coarse(p **sketch.Sketch) *sketch.Sketch {
	if *p == nil {
		*p = sketch.New(sketch.CoarseAlpha)
	}
	return *p
}

// Timeline is a bounded series of buckets: when it would exceed its cap,
// neighbouring buckets merge pairwise and the width doubles, so an hour or a
// week costs the same memory.
type Timeline struct {
	Origin  time.Time
	Width   time.Duration
	Buckets []Bucket
	cap     int
}

func newTimeline(origin time.Time, maxBuckets int) *Timeline {
	return &Timeline{Origin: origin, Width: time.Second, cap: maxBuckets}
}

// at returns the bucket covering t, growing (or, for a time before the origin,
// shifting) the series as needed.
func (tl *Timeline) at(t time.Time) *Bucket {
	if tl.Origin.IsZero() {
		tl.Origin = t.Truncate(time.Second)
	}
	d := t.Sub(tl.Origin)
	if d < 0 {
		shift := int((-d + tl.Width - 1) / tl.Width)
		if shift > 10*tl.cap {
			shift = 10 * tl.cap // a wildly wrong clock must not allocate unbounded memory
		}
		nb := make([]Bucket, shift+len(tl.Buckets))
		copy(nb[shift:], tl.Buckets)
		tl.Buckets = nb
		tl.Origin = tl.Origin.Add(-time.Duration(shift) * tl.Width)
		d = max(0, t.Sub(tl.Origin))
	}
	i := int(d / tl.Width)
	for i >= 2*tl.cap {
		// Far in the future: widen first so the slice never outgrows the cap.
		tl.halve()
		i = int(t.Sub(tl.Origin) / tl.Width)
	}
	if i >= len(tl.Buckets) {
		tl.Buckets = append(tl.Buckets, make([]Bucket, i+1-len(tl.Buckets))...)
	}
	for len(tl.Buckets) > tl.cap {
		tl.halve()
		i = int(t.Sub(tl.Origin) / tl.Width)
	}
	return &tl.Buckets[i]
}

func (tl *Timeline) halve() {
	n := (len(tl.Buckets) + 1) / 2
	nb := make([]Bucket, n)
	for j := range tl.Buckets {
		nb[j/2].merge(&tl.Buckets[j])
	}
	tl.Buckets = nb
	tl.Width *= 2
}

// spread adds the overlap (in seconds) of [from, to) to every bucket it covers.
func (tl *Timeline) spreadLongPrefill(from, to time.Time) {
	if !to.After(from) {
		return
	}
	tl.at(from)
	tl.at(to) // make both ends exist before indexing (may halve the series)
	for t := from; t.Before(to); {
		b := tl.at(t)
		i := int(t.Sub(tl.Origin) / tl.Width)
		end := tl.Origin.Add(time.Duration(i+1) * tl.Width)
		if end.After(to) {
			end = to
		}
		b.LongPrefill += end.Sub(t).Seconds()
		t = end
	}
}

func (tl *Timeline) clone() *Timeline {
	c := *tl
	c.Buckets = make([]Bucket, len(tl.Buckets))
	for i := range tl.Buckets {
		c.Buckets[i] = tl.Buckets[i].clone()
	}
	return &c
}

// BucketStart is the wall time at which bucket i begins.
func (tl *Timeline) BucketStart(i int) time.Time {
	return tl.Origin.Add(time.Duration(i) * tl.Width)
}

// windowTTFT merges the TTFT sketches of buckets [from, to).
func (tl *Timeline) window(from, to int, pick func(*Bucket) *sketch.Sketch) *sketch.Sketch {
	s := sketch.New(sketch.CoarseAlpha)
	for i := max(0, from); i < min(to, len(tl.Buckets)); i++ {
		if p := pick(&tl.Buckets[i]); p != nil {
			_ = s.Merge(p)
		}
	}
	return s
}

func nan() float64 { return math.NaN() }
