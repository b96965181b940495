package capacity

import (
	"errors"
	"testing"

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
		{"unknown arrivals", Options{Rate: rate, SLO: slo, Arrivals: "bursty"}, "arrivals must be 'poisson' or 'constant'"},
		{"arrivals closed", Options{Concurrency: rate, SLO: slo, Arrivals: "constant"}, "arrivals is for the open model"},
		{"trace and arrivals", Options{Rate: rate, SLO: slo, Trace: struct{}{}, Arrivals: "poisson"}, "give trace or arrivals/seed"},
		{"trace and seed", Options{Rate: rate, SLO: slo, Trace: struct{}{}, Seed: 7}, "give trace or arrivals/seed"},
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
