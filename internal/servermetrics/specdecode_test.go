package servermetrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/sim"
)

// llm-sim with speculative decoding on: the view's acceptance rate, mean
// acceptance length and acceptance by position are the configured ones
// (its counters round each position's accepted tokens down: within one
// token per position of the shares).
func TestSpecDecodeFromLLMSim(t *testing.T) {
	t.Parallel()
	m, err := sim.NewModel("m", "fast")
	require.NoError(t, err)
	m.SpecDecodeAcceptance = []float64{0.8, 0.6, 0.4}
	cfg := sim.DefaultConfig()
	cfg.Models = []sim.ModelConfig{m}
	srv, err := sim.New(cfg)
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = srv.Close() })

	sc, err := New(Config{URL: ts.URL + "/metrics", Interval: time.Hour})
	require.NoError(t, err)
	sc.Start()
	for range 10 {
		resp, err := http.Post(ts.URL+"/v1/chat/completions", "application/json", //nolint:noctx // loopback test
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":50,"stream":true}`))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	sc.Stop()
	v := sc.View(nil)
	sd := v.Run.SpecDecode
	require.NotNil(t, sd, "%+v", v.Run.Counters)
	require.Positive(t, sd.Drafts)
	require.NotNil(t, sd.AcceptanceRate)
	tol := 1 / sd.Drafts
	assert.InDelta(t, 0.6, *sd.AcceptanceRate, tol)
	assert.InDelta(t, 1+1.8, *sd.MeanAcceptanceLength, 3*tol)
	require.Len(t, sd.ByPosition, 3)
	for i, want := range []float64{0.8, 0.6, 0.4} {
		assert.InDelta(t, want, sd.ByPosition[i], tol, "position %d", i)
	}
	assert.InDelta(t, 3*sd.Drafts, sd.DraftTokens, 0)
	for k := range v.Run.Counters {
		assert.NotContains(t, k, "/", "positions are in ByPosition, not among the counters")
	}
}

// vLLM's cache_config_info labels are the server's configuration, without
// the labels naming the engine or model.
func TestServerConfigFromCacheConfigInfo(t *testing.T) {
	t.Parallel()
	p, err := parseBody(fixture(t, "openmetrics.txt"), "application/openmetrics-text; version=1.0.0; charset=utf-8")
	require.NoError(t, err)
	c := reduce(p.families, "").config
	assert.Equal(t, map[string]string{"block_size": "16", "enable_prefix_caching": "True", "num_gpu_blocks": "27000"}, c)
	assert.Equal(t, "block_size 16, enable_prefix_caching True, num_gpu_blocks 27000", ConfigText(c))
}
