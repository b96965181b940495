package capacity

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

func TestParseObjectives(t *testing.T) {
	objs, err := ParseObjectives("slo", "chat", map[string]string{
		"ttft": "p95<2s", "tpot": "p95 < 80ms", "e2e": "p99.9<=30000", "errors": "<1%"})
	require.NoError(t, err)
	require.Len(t, objs, 4)
	byFigure := map[string]Objective{}
	for _, o := range objs {
		require.Equal(t, "chat", o.Client)
		byFigure[o.Figure] = o
	}
	require.Equal(t, Objective{Text: "ttft p95<2s", Client: "chat", Figure: "ttft", Quantile: 0.95, Limit: 2000}, byFigure["ttft"])
	require.InDelta(t, 80, byFigure["tpot"].Limit, 1e-9)
	require.InDelta(t, 0.999, byFigure["e2e"].Quantile, 1e-12)
	require.InDelta(t, 30000, byFigure["e2e"].Limit, 1e-9)
	require.InDelta(t, 0.01, byFigure["errors"].Limit, 1e-12)
	require.Equal(t, 30*time.Second, LongestLimit(objs))
}

func TestParseObjectivesRefusesBadInput(t *testing.T) {
	for spec, want := range map[string]string{
		"ttft=p95":     "want a percentile and a limit",
		"ttft=p100<2s": "unknown percentile",
		"ttft=p0<2s":   "unknown percentile",
		"ttft=avg<2s":  "want a percentile and a limit",
		"ttft=p95>2s":  "want a percentile and a limit",
		"ttft=p95<2x":  "not a duration",
		"ttft=p95<-2s": "must be positive",
		"itl=p95<2s":   `unknown figure "itl"`,
		"errors=<101%": "below 100%",
		"errors=<abc":  "not a share",
		"errors=p95<1": "want an upper limit",
	} {
		k, v, _ := cut(spec)
		_, err := ParseObjectives("Capacity.search slo", "", map[string]string{k: v})
		require.ErrorContains(t, err, want, spec)
		require.ErrorContains(t, err, "Capacity.search slo."+k, spec)
	}
	_, err := ParseObjectives("slo", "", nil)
	require.ErrorContains(t, err, "no objective")
}

func cut(s string) (string, string, bool) {
	for i := range s {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func TestConfigRefusesBadInput(t *testing.T) {
	objs := []Objective{{Text: "ttft p95<2s", Figure: FigureTTFT, Quantile: 0.95, Limit: 2000}}
	ok := Config{Model: ModelRate, Min: 1, Max: 10, Window: 20 * time.Second, Objectives: objs}
	for name, c := range map[string]struct {
		mod  func(*Config)
		want string
	}{
		"no model":        {func(c *Config) { c.Model = "" }, "give rate: {min, max}"},
		"inverted":        {func(c *Config) { c.Min, c.Max = 10, 1 }, "rate: the range is empty or inverted"},
		"empty":           {func(c *Config) { c.Min, c.Max = 4, 4 }, "empty or inverted"},
		"zero min":        {func(c *Config) { c.Min = 0 }, "min must be a positive number"},
		"fractional conc": {func(c *Config) { c.Model, c.Min = ModelConcurrency, 1.5 }, "whole numbers"},
		"short window":    {func(c *Config) { c.Window = time.Second }, "window must be at least 3s"},
		"too short":       {func(c *Config) { c.Window = 4 * time.Second }, "too short for the calls"},
		"few calls": {func(c *Config) { c.Min, c.MaxWindow = 0.5, time.Minute },
			"maxWindow 1m0s is too short for the calls: a window passes ttft p95<2s only from 59 calls, and at rate.min 0.5 req/s"},
		"short maxWindow": {func(c *Config) { c.MaxWindow = 10 * time.Second }, "maxWindow must be at least the window (20s)"},
		"short sustain":   {func(c *Config) { c.Sustain = 10 * time.Second }, "sustain must be at least the window (20s)"},
		"precision":       {func(c *Config) { c.Precision = 2 }, "precision must be in (0, 1)"},
		"share":           {func(c *Config) { c.Share = 1.5 }, "share must be in (0, 1]"},
		"warmup":          {func(c *Config) { c.Warmup = 15 * time.Second }, "warmup must be between"},
		"no slo":          {func(c *Config) { c.Objectives = nil }, "slo: no objective"},
		"closed trace": {func(c *Config) {
			c.Model, c.Trace = ModelConcurrency, &runrecord.CapacityTrace{Name: "t.jsonl", MeanRate: 5}
		}, "trace is for the open model"},
		"rateless trace": {func(c *Config) { c.Trace = &runrecord.CapacityTrace{Name: "t.jsonl"} }, "trace t.jsonl has no mean rate"},
	} {
		cfg := ok
		c.mod(&cfg)
		_, err := New(cfg)
		require.ErrorContains(t, err, c.want, name)
	}
	s, err := New(ok)
	require.NoError(t, err)
	require.Equal(t, 4*time.Second, s.Config().Warmup)
	require.Equal(t, 16, s.Config().MaxWindows)
	// The longest window holds half again the 59 calls a p95 passes on at
	// rate.min (1 req/s) after its warm-up: 4 s + 88.5 s, to the second;
	// the sustain window three windows.
	require.Equal(t, 93*time.Second, s.Config().MaxWindow)
	require.Equal(t, time.Minute, s.Config().Sustain)
	// The search's longest: every window of the budget at four times its
	// longest (a default-length window goes on while its calls call for it).
	require.Equal(t, 16*(4*93+20)*time.Second, s.Config().MaxDuration())
	// A short window still sustains a minute; the closed model's longest
	// window is four windows (its calls per second are not known ahead).
	short := ok
	short.Window, short.Model, short.Min = 5*time.Second, ModelConcurrency, 1
	short.Objectives = []Objective{{Text: "ttft p95<1s", Figure: FigureTTFT, Quantile: 0.95, Limit: 1000}}
	s, err = New(short)
	require.NoError(t, err)
	require.Equal(t, time.Minute, s.Config().Sustain)
	require.Equal(t, 20*time.Second, s.Config().MaxWindow)
	// Bursty arrivals of cv 2 need cv² = 4 times the calls: the longest
	// window is four times four windows, or 4 s + 4 × 88.5 s at rate.min,
	// whichever is longer; Poisson and constant arrivals keep the default.
	bursty := ok
	bursty.Arrivals, bursty.CV = ArrivalsBursty, 2
	s, err = New(bursty)
	require.NoError(t, err)
	require.Equal(t, 358*time.Second, s.Config().MaxWindow)
	bursty.Min = 8
	s, err = New(bursty)
	require.NoError(t, err)
	require.Equal(t, 320*time.Second, s.Config().MaxWindow)
	for _, cv := range []float64{0, 1} {
		plain := ok
		plain.CV, plain.Min = cv, 8
		s, err = New(plain)
		require.NoError(t, err)
		require.Equal(t, 80*time.Second, s.Config().MaxWindow, "cv %v", cv)
	}
}

// The calls a pass needs: a p95 59, a p99 299, an error rate under 1 % 299
// (no failure among them), under 5 % 59; a limit of 0 errors asks no count.
func TestPassCalls(t *testing.T) {
	objs := objectivesOf3(t, map[string]string{"ttft": "p95<2s"})
	n, which := PassCalls(objs)
	require.Equal(t, 59, n)
	require.Equal(t, "ttft p95<2s", which)
	n, which = PassCalls(objectivesOf3(t, map[string]string{"ttft": "p95<2s", "e2e": "p99<9s", "errors": "<5%"}))
	require.Equal(t, 299, n)
	require.Equal(t, "e2e p99<9s", which)
	n, _ = PassCalls(objectivesOf3(t, map[string]string{"errors": "<1%"}))
	require.Equal(t, 299, n)
	n, _ = PassCalls(objectivesOf3(t, map[string]string{"errors": "<0%"}))
	require.Equal(t, 1, n)
}

func objectivesOf3(t *testing.T, slo map[string]string) []Objective {
	t.Helper()
	o, err := ParseObjectives("slo", "", slo)
	require.NoError(t, err)
	return o
}

func TestSlopeTestNeedsARealRise(t *testing.T) {
	var flat, noisyFlat, rising []point
	for i := range 40 {
		x := float64(i) / 4
		flat = append(flat, point{x, 100, x})
		noisyFlat = append(noisyFlat, point{x, 100 + float64(i%5) - 2, x})
		rising = append(rising, point{x, 100 + 20*x + float64(i%5), x})
	}
	require.False(t, fit(flat, 0, 100).rising(0.5, 0))
	require.False(t, fit(noisyFlat, 0, 100).rising(0.5, 0))
	require.True(t, fit(rising, 0, 100).rising(0.5, 0))
	require.False(t, fit(rising, 0, 100).rising(5, 0), "a rise smaller than asked for")
	require.False(t, fit(rising[:5], 0, 100).rising(0.5, 0), "too few points")
	require.False(t, fit(rising, 0, 1).rising(0.5, 0), "points not yet known are left out")
}

func TestIsotonicPoolsAContradiction(t *testing.T) {
	// 4 passed, 8 failed, 6 passed narrowly, then 5 failed narrowly: 5 and
	// 6 contradict the order and are pooled.
	rows := rowsOf(map[float64]float64{4: -0.5, 8: 1, 6: -0.05, 5: 0.2})
	fitted := isotonic(rows)
	require.Len(t, fitted, 4)
	require.InDelta(t, 0.075, fitted[1].margin, 1e-9)
	require.InDelta(t, 0.075, fitted[2].margin, 1e-9)
	l := levels{cfg: Config{Model: ModelRate, Min: 1, Max: 100, Precision: 0.05}, tried: rows}
	pass, fail, ok := l.bracket()
	require.True(t, ok)
	require.Equal(t, 4.0, pass)
	require.Equal(t, 5.0, fail)
}
