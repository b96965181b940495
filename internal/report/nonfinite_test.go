package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// TestANonFiniteNumberNeverLosesTheRecord: a NaN in a computed figure (a
// server view's mean of 0/0, a ratio) and in the script's meta once made
// Render fail with "json: unsupported value: NaN": no record, no HTML, no
// text. Now the record is written, valid and readable, with null in their
// places, which it lists, and the text says where they were.
func TestANonFiniteNumberNeverLosesTheRecord(t *testing.T) {
	r := synth{seed: 1, stages: []synthStage{{8, 30}}}.collect()
	calls, prompt := runTotals(r)
	nan := math.NaN()
	v := serverView(float64(calls), float64(prompt), servermetrics.GaugeStats{Samples: 30},
		map[string]servermetrics.HistStats{servermetrics.TTFT: {Count: 0, Mean: &nan}})
	inf := math.Inf(1)
	v.Run.PrefixHitRatio = &inf
	text, html, raw, err := Render(r, nil, RenderOptions{Server: []servermetrics.View{v}, Meta: map[string]any{"ratio": nan, "k6": "v1.8.1"}})
	require.NoError(t, err, "one bad number must not lose the report")
	require.NotEmpty(t, html)
	require.True(t, json.Valid(raw), "%s", raw)
	rec, err := runrecord.LoadBaseline(raw)
	require.NoError(t, err, "the record reads back")
	want := []string{"/meta/ratio", "/server/0/run/histograms/ttft/mean", "/server/0/run/prefix_hit_ratio"}
	assert.ElementsMatch(t, want, rec.NonFinite)
	var generic map[string]any
	require.NoError(t, json.Unmarshal(raw, &generic))
	meta, _ := generic["meta"].(map[string]any)
	assert.Contains(t, meta, "ratio")
	assert.Nil(t, meta["ratio"], "written as null (unknown), never 0")
	assert.Equal(t, "v1.8.1", meta["k6"])
	for _, p := range want {
		assert.Contains(t, text, p, "the text says where")
	}
	assert.Equal(t, 1, strings.Count(text, "not finite"), "one warning:\n%s", text)
}

// TestTheNullingEncoderKeepsTheRecordsLayout: the encoder taken when a
// number is not finite writes the record as encoding/json does (names,
// order, omitted fields, sketches, times, indentation), with null in that
// number's place and the place listed: byte for byte the record
// encoding/json writes once the number is null.
func TestTheNullingEncoderKeepsTheRecordsLayout(t *testing.T) {
	r := synth{seed: 3, stages: []synthStage{{4, 40}, {12, 40}}, stallProb: 0.05, hitRate: 0.3, sharedPrefix: true}.collect()
	calls, prompt := runTotals(r)
	v := serverView(float64(calls), float64(prompt), servermetrics.GaugeStats{Samples: 80, P95: 2},
		map[string]servermetrics.HistStats{servermetrics.TTFT: {Count: float64(calls), Mean: ptr(0.2)}})
	opt := RenderOptions{Server: []servermetrics.View{v}, Meta: map[string]any{"k6": "v1.8.1", "seed": 7, "x": math.NaN(), "html": "<b>&</b>"}}
	rec, err := runRecord(r, Diagnose(r), nil, opt)
	require.NoError(t, err)
	got, places, err := runrecord.Encode(rec)
	require.NoError(t, err)
	assert.Equal(t, []string{"/meta/x"}, places)
	assert.Nil(t, rec.NonFinite, "the caller's record is left as it was")

	rec.Meta["x"] = nil
	rec.NonFinite = places
	want, err := json.MarshalIndent(rec, "", " ")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
}
