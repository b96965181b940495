package config

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

func TestDatasetOptionsAndRanges(t *testing.T) {
	t.Parallel()
	var o dataset.SyntheticOptions
	require.NoError(t, Decode("Dataset.synthetic options", map[string]any{
		"seed": int64(3), "mix": map[string]any{"short": int64(1)}, "turns": []any{int64(1), 3.0},
		"sharedPrefix": map[string]any{"count": int64(2), "tokens": int64(500)},
		"categories": map[string]any{
			"a": map[string]any{"prompt": int64(7), "maxTokens": map[string]any{"min": int64(10), "max": int64(20)}},
			"b": map[string]any{"weight": int64(0), "style": "code"},
		},
	}, &o))
	w := 0.0
	require.Equal(t, dataset.SyntheticOptions{
		Seed: 3, Mix: map[string]float64{"short": 1}, Turns: dataset.Range{Min: 1, Max: 3},
		SharedPrefix: dataset.SharedPrefixOptions{Count: 2, Tokens: 500},
		Categories: map[string]dataset.CategorySpec{
			"a": {Prompt: &dataset.Range{Min: 7, Max: 7}, MaxTokens: &dataset.Range{Min: 10, Max: 20}},
			"b": {Weight: &w, Style: "code"},
		},
	}, o)

	for in, want := range map[string]any{
		`turns must be a number, [min, max] or {min, max}: a list of two numbers, got 3`: []any{int64(1), int64(2), int64(3)},
		`turns[1] must be a whole number, got "3"`:                                       []any{int64(1), "3"},
		`turns must be a number, [min, max] or {min, max}, got 1.5`:                      1.5,
		`unknown option "turns.mx" (did you mean "max"?)`:                                map[string]any{"mx": int64(3)},
	} {
		var o dataset.SyntheticOptions
		require.ErrorContains(t, Decode("o", map[string]any{"turns": want}, &o), in)
	}

	var l dataset.LoadOptions
	err := Decode("Dataset.load options", map[string]any{"buckets": []any{
		map[string]any{"name": "s", "prompt": []any{int64(0), int64(99)}},
		map[string]any{"name": "l", "promt": int64(1)},
	}}, &l)
	require.EqualError(t, err, `Dataset.load options: unknown option "buckets[1].promt" (did you mean "prompt"?); `+
		`known: name, prompt, minOutputTokens, maxTokens`)
}

func TestReportOptions(t *testing.T) {
	t.Parallel()
	r := DefaultReport()
	require.NoError(t, Decode("report options", map[string]any{"json": "run.json", "meta": map[string]any{"build": int64(7)}}, &r))
	require.Equal(t, Report{JSON: "run.json", Meta: map[string]any{"build": int64(7)}, Stdout: true}, r)
	require.EqualError(t, Decode("report options", map[string]any{"baseLine": "x.json"}, &r),
		`report options: unknown option "baseLine" (did you mean "baseline"?); known: html, json, baseline, title, meta, stdout, minStage`)
}
