package capacity

import (
	"errors"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// client stands for a script's Client: the binding's label reads its name.
type client string

func labelOf(v any, where string) (string, error) {
	switch c := v.(type) {
	case nil:
		return "", nil
	case client:
		return string(c), nil
	default:
		return "", errors.New(where + " must be a Client")
	}
}

func TestConfigOfTheOptions(t *testing.T) {
	cfg, err := ConfigOf(Options{Rate: &Range{Min: 1, Max: 64}, SLO: map[string]string{"ttft": "p95<2s"}}, labelOf)
	require.NoError(t, err)
	assert.Equal(t, ModelRate, cfg.Model)
	assert.Equal(t, DefaultWindow, cfg.Window, "a window when the options give none")
	assert.InDelta(t, 64, cfg.Max, 0)
	require.Len(t, cfg.Objectives, 1)
	assert.Empty(t, cfg.Objectives[0].Client, "slo without client judges every call")
	assert.Equal(t, ArrivalsPoisson, cfg.Arrivals, "Poisson arrivals when none are given")
	assert.InDelta(t, 1, cfg.CV, 0)

	for arr, cv := range map[string]float64{"constant": 0, "bursty": DefaultBurstCV} {
		cfg, err = ConfigOf(Options{Rate: &Range{Min: 1, Max: 64}, SLO: map[string]string{"ttft": "p95<2s"}, Arrivals: arr}, labelOf)
		require.NoError(t, err)
		assert.Equal(t, arr, cfg.Arrivals)
		assert.InDelta(t, cv, cfg.CV, 0, arr)
	}
	cfg, err = ConfigOf(Options{Rate: &Range{Min: 1, Max: 64}, SLO: map[string]string{"ttft": "p95<2s"}, Arrivals: "bursty", CV: 2,
		MaxWindow: time.Minute, Sustain: 2 * time.Minute}, labelOf)
	require.NoError(t, err)
	assert.InDelta(t, 2, cfg.CV, 0)
	assert.Equal(t, time.Minute, cfg.MaxWindow)
	assert.Equal(t, 2*time.Minute, cfg.Sustain)

	cfg, err = ConfigOf(Options{Concurrency: &Range{Min: 1, Max: 8}, SLO: map[string]string{"e2e": "p99<30s"},
		Client: client("big"), Clients: []any{map[string]any{"client": client("small"), "slo": map[string]any{"ttft": "p95<1s"}}}}, labelOf)
	require.NoError(t, err)
	assert.Equal(t, ModelConcurrency, cfg.Model)
	require.Len(t, cfg.Objectives, 2)
	assert.Equal(t, "big", cfg.Objectives[0].Client)
	assert.Equal(t, "small", cfg.Objectives[1].Client)
}

func TestConfigOfRefusesOptionsThatDoNotGoTogether(t *testing.T) {
	slo := map[string]string{"ttft": "p95<2s"}
	rate := &Range{Min: 1, Max: 8}
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"both models", Options{Rate: rate, Concurrency: rate, SLO: slo}, "not both"},
		{"unknown arrivals", Options{Rate: rate, SLO: slo, Arrivals: "gamma"}, "arrivals must be 'poisson', 'constant' or 'bursty'"},
		{"cv without bursty", Options{Rate: rate, SLO: slo, CV: 2}, "cv is for arrivals: 'bursty'"},
		{"cv too large", Options{Rate: rate, SLO: slo, Arrivals: "bursty", CV: 31}, "cv must be in (0, 30]"},
		{"trace and cv", Options{Rate: rate, SLO: slo, Trace: struct{}{}, CV: 2}, "give trace or arrivals/seed/cv"},
		{"arrivals closed", Options{Concurrency: rate, SLO: slo, Arrivals: "constant"}, "arrivals is for the open model"},
		{"trace and arrivals", Options{Rate: rate, SLO: slo, Trace: struct{}{}, Arrivals: "poisson"}, "give trace or arrivals/seed/cv"},
		{"trace and seed", Options{Rate: rate, SLO: slo, Trace: struct{}{}, Seed: seed(7)}, "give trace or arrivals/seed/cv"},
		{"trace and seed 0", Options{Rate: rate, SLO: slo, Trace: struct{}{}, Seed: seed(0)}, "give trace or arrivals/seed/cv"},
		{"client without slo", Options{Rate: rate, Client: client("a")}, "client goes with slo"},
		{"client not a client", Options{Rate: rate, SLO: slo, Client: 3}, "client must be a Client"},
		{"clients entry not an object", Options{Rate: rate, Clients: []any{"a"}}, "clients[0] must be an object"},
		{"clients entry without client", Options{Rate: rate, Clients: []any{map[string]any{"slo": map[string]any{}}}},
			"clients[0].client is required"},
		{"clients slo not a string", Options{Rate: rate, Clients: []any{map[string]any{"client": client("a"),
			"slo": map[string]any{"ttft": 2}}}}, "clients[0].slo.ttft must be a string"},
		{"clients slo empty", Options{Rate: rate, Clients: []any{map[string]any{"client": client("a")}}}, "clients[0].slo: no objective"},
	} {
		_, err := ConfigOf(c.o, labelOf)
		require.ErrorContains(t, err, c.want, c.name)
	}
}

// decodeSearch reads a script's options as the binding does.
func decodeSearch(t *testing.T, extra map[string]any) (Config, error) {
	t.Helper()
	m := map[string]any{"rate": map[string]any{"min": int64(1), "max": int64(64)}, "slo": map[string]any{"ttft": "p95<2s"}}
	for k, v := range extra {
		m[k] = v
	}
	var o Options
	if err := config.Decode("Capacity.search options", m, &o); err != nil {
		return Config{}, err
	}
	cfg, err := ConfigOf(o, labelOf)
	if err != nil {
		return cfg, err
	}
	s, err := New(cfg)
	if err != nil {
		return cfg, err
	}
	return s.Config(), nil
}

// A 0 the script gives is not the absent option: a bracket of no width, a
// share of nothing, a budget or a window of none mean nothing, and taking
// them for the default would hide the script's mistake.
func TestSearchRefusesAGivenZero(t *testing.T) {
	for option, want := range map[string]string{
		"precision":  "Capacity.search options: precision must be a number in (0, 1) such as 0.05 (within 5%), got 0",
		"share":      "Capacity.search options: share must be a number in (0, 1] such as 0.8 (plan at 80% of the capacity), got 0",
		"maxWindows": "Capacity.search options: maxWindows must be a whole number of windows, at least 3, got 0",
		"window":     "Capacity.search options: window must be a duration above 0 like '20s', got 0",
	} {
		_, err := decodeSearch(t, map[string]any{option: int64(0)})
		require.EqualError(t, err, want, option)
	}
	_, err := decodeSearch(t, map[string]any{"precision": -0.1})
	require.ErrorContains(t, err, "precision must be a number in (0, 1)", "a negative one as before")
	_, err = decodeSearch(t, map[string]any{"window": "0s"})
	require.ErrorContains(t, err, "window must be a duration above 0", "zero as a string too")

	cfg, err := decodeSearch(t, map[string]any{"precision": nil, "share": nil, "maxWindows": nil, "window": nil})
	require.NoError(t, err, "null is absent")
	assert.InDelta(t, defaultPrecision, cfg.Precision, 0)
	assert.InDelta(t, defaultShare, cfg.Share, 0)
	assert.Equal(t, defaultMaxWindows, cfg.MaxWindows)
	assert.Equal(t, DefaultWindow, cfg.Window)
	assert.Equal(t, DefaultWindow/5, cfg.Warmup)
}

// warmup: 0 is meaningful, no warm-up: every call of the window counts.
func TestSearchTakesAGivenZeroWarmup(t *testing.T) {
	cfg, err := decodeSearch(t, map[string]any{"warmup": int64(0), "window": "10s"})
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), cfg.Warmup, "given as 0: none, not the default fifth")
	cfg, err = decodeSearch(t, map[string]any{"window": "10s"})
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, cfg.Warmup, "absent: a fifth of the window")
}

func seed(v uint64) *uint64 { return &v }
