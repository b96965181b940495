package config

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An option whose 0 means nothing, given as 0, is refused with its name: an
// SLO limit of 0 no call can meet, a scrape every 0 s, a scrape timeout of 0,
// a stage of no length. Taking the 0 for the default (or, for the SLO, for no
// objective) would run another test than the one the script wrote.
func TestAGivenZeroIsRefusedWhereItMeansNothing(t *testing.T) {
	t.Parallel()
	client := func(k string, v any) map[string]any {
		return map[string]any{"baseURL": "http://127.0.0.1:1/v1", k: v}
	}
	for _, name := range []string{"ttft", "tpot", "e2e"} {
		_, err := ParseClient(client("slo", map[string]any{name: int64(0)}))
		require.EqualError(t, err, "Client options: slo."+name+" must be a duration above 0 like '800ms' (leave it out for no objective on it), got 0")
	}
	for _, name := range []string{"interval", "timeout"} {
		_, err := ParseClient(client("serverMetrics", map[string]any{"url": "http://127.0.0.1:1/metrics", name: "0s"}))
		require.ErrorContains(t, err, "Client options: serverMetrics."+name+" must be a duration above 0", name)
	}
	r := DefaultReport()
	require.EqualError(t, Decode("report options", map[string]any{"minStage": int64(0)}, &r),
		"report options: minStage must be a duration above 0 like '10s', got 0")

	c, err := ParseClient(client("slo", map[string]any{"ttft": "800ms", "tpot": nil}))
	require.NoError(t, err, "an absent or null one is still unset")
	require.Zero(t, c.SLO.TPOT)
	c, err = ParseClient(client("serverMetrics", map[string]any{"url": "http://127.0.0.1:1/metrics"}))
	require.NoError(t, err)
	require.Zero(t, c.ServerMetrics[0].Interval, "the scraper's default")
}
