package report

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// rampRun is a test whose first five seconds offer few gaps, all kept
// (10 calls a second of 100 gaps of 20 ms), and whose last five offer
// many, one of each call's kept (20 calls a second of 200 gaps of
// 60 ms), as a ramp into saturation does under the gapSampleRate cap;
// with even, every call keeps the same share throughout; more adds calls
// of its own.
func rampRun(t *testing.T, even bool, more ...func(c *Collector, t0 time.Time)) *Run {
	t.Helper()
	c := NewCollector(Options{})
	t0 := time.Unix(1_700_000_000, 0)
	for s := range 10 {
		at := t0.Add(time.Duration(s) * time.Second)
		if s < 5 {
			for range 10 {
				c.Add(gapCall(at, 100, 20*time.Millisecond, map[bool]int{true: 50, false: 0}[even]))
			}
			continue
		}
		for range 20 {
			c.Add(gapCall(at, 200, 60*time.Millisecond, map[bool]int{true: 100, false: 199}[even]))
		}
	}
	for _, f := range more {
		f(c, t0)
	}
	return c.Snapshot()
}

// gapCall is a successful call started at at with n gaps of gap, unsampled
// of which the cap left out of k6.
func gapCall(at time.Time, n int, gap time.Duration, unsampled int) *Observation {
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = gap
	}
	return &Observation{
		Result: &stream.Result{
			Start: at, End: at.Add(time.Duration(n) * gap), OK: true,
			TTFT: measure.Of(100 * time.Millisecond), E2E: measure.Of(time.Duration(n) * gap),
			Gaps: stream.GapsOf(ds...),
		},
		GapsUnsampled: unsampled,
	}
}

var noteP95 = regexp.MustCompile(`P95 ≈ ([0-9.]+)ms where every gap's is ([0-9.]+)ms`)

// The note reads what k6's percentiles of its sample say: a ramp kept at
// 100 % while quiet and 0.5 % at its peak gives k6 a P95 of the quiet
// stretch's gaps (20 ms) where every gap's is the peak's (60 ms), and says
// the range of shares it kept.
func TestGapSampleNoteShowsWhatARampDoesToK6sPercentiles(t *testing.T) {
	text := RenderText(rampRun(t, false), nil, nil)
	if !strings.Contains(text, "left out 19900 of 25000 gaps") || !strings.Contains(text, "It kept 0.5%–100.0% of the gaps") {
		t.Fatalf("no count or no range of the kept shares:\n%s", text)
	}
	k6, every := p95s(t, text)
	if k6 > 22 || every < 55 {
		t.Fatalf("k6's P95 ≈ %v ms, every gap's %v ms; want about 20 and 60:\n%s", k6, every, text)
	}
}

// The calls the test's stop cut sent k6 none of their gaps: the stretch
// they started in counts as kept at 0 %, not at the share of the calls
// that reported a count.
func TestGapSampleNoteCountsCutCallsAsUnsent(t *testing.T) {
	run := rampRun(t, true, func(c *Collector, at time.Time) {
		for range 5 {
			o := gapCall(at.Add(10*time.Second), 100, 20*time.Millisecond, 0)
			o.OK, o.Err = false, &stream.Error{Type: stream.ErrCanceled, Message: "context canceled"}
			c.Add(o)
		}
	})
	if text := RenderText(run, nil, nil); !strings.Contains(text, "It kept 0.0%–50.0% of the gaps") {
		t.Fatalf("the cut calls' stretch is not kept at 0 %%:\n%s", text)
	}
}

// Kept at one share throughout, k6's percentiles are every gap's.
func TestGapSampleNoteAtAnEvenShare(t *testing.T) {
	text := RenderText(rampRun(t, true), nil, nil)
	if !strings.Contains(text, "It kept 50.0%–50.0% of the gaps") {
		t.Fatalf("no even share:\n%s", text)
	}
	if !strings.Contains(text, "k6's P95 and P99 read as every gap's do") || noteP95.MatchString(text) {
		t.Fatalf("at an even share the note does not say k6 reads every gap's percentiles:\n%s", text)
	}
}

func p95s(t *testing.T, text string) (k6, every float64) {
	t.Helper()
	m := noteP95.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no P95 in the note:\n%s", text)
	}
	k6, _ = strconv.ParseFloat(m[1], 64)
	every, _ = strconv.ParseFloat(m[2], 64)
	return k6, every
}
