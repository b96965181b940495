package record

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// TestEveryRowSaysWhatItIs: a row a reader sees (a JS key, a k6 metric or a
// distribution) has its one line of help.
func TestEveryRowSaysWhatItIs(t *testing.T) {
	check := func(name, help string) {
		require.NotEmptyf(t, help, "the row %s has no Help", name)
		require.NotContainsf(t, help, "\n", "the row %s's Help is one line", name)
	}
	for _, f := range Figures {
		check(f.Key+f.Metric+string(f.Keep.Dist), f.Help)
	}
	for _, f := range RetrievalFigures {
		check(f.Key+f.Metric, f.Help)
	}
	for _, f := range JobFigures {
		check(f.Key+f.Metric, f.Help)
	}
}

// TestEveryDistConstantHasItsRow: a constant the report reads a
// distribution by is kept by exactly one row (Dist.Row panics otherwise), and
// every distribution's values are one per call unless it says PerEvent.
func TestEveryDistConstantHasItsRow(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "keep.go", nil, 0)
	require.NoError(t, err)
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil || len(vs.Values) != 1 {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Dist" {
			s, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
			require.NoError(t, err)
			names = append(names, s)
		}
		return true
	})
	require.NotEmpty(t, names, "no Dist constant found in keep.go")
	for _, n := range names {
		d, ok := DistByName(n)
		require.Truef(t, ok, "no row keeps the distribution %q", n)
		require.Equal(t, n, d.Row().Keep.Dist.String())
		require.Equal(t, d, Dists[d.Index()])
	}
	for _, d := range Dists {
		r := d.Row()
		require.Equalf(t, r.Keep.PerEvent, r.kept == nil, "%s: a distribution is read one value per call (Kept) unless it is PerEvent", d)
		require.Falsef(t, strings.ContainsAny(string(d), "ABCDEFGHIJKLMNOPQRSTUVWXYZ -"), "%s: a record key is snake_case", d)
	}
}

// TestAFailedCallFollowsEachRowsRule: a call that failed after its first
// tokens, with every figure measured, has in its JS result, its k6 samples
// and the report the same figures: those its rows count (Counted), none of
// those that describe a whole answer (AnswersOnly). An answered copy of it
// has them all, so the rule, not a missing measurement, left them out.
func TestAFailedCallFollowsEachRowsRule(t *testing.T) {
	t0 := time.Unix(1000, 0)
	measuredCall := func(ok bool) *Call {
		c := &Call{Result: &stream.Result{OK: ok, Start: t0, End: t0.Add(time.Second), FirstOutAt: t0.Add(100 * time.Millisecond),
			LastOutAt: t0.Add(900 * time.Millisecond), TTFB: measure.Of(50 * time.Millisecond), TTFT: measure.Of(100 * time.Millisecond),
			TTFTAnswer: measure.Of(300 * time.Millisecond), Reasoning: "hmm", E2E: measure.Of(time.Second),
			TPOT: measure.Of(20 * time.Millisecond), TokensPerSec: 50,
			ClientParse: 3 * time.Millisecond, OutputTokens: 40, Gaps: stream.GapsOf(20*time.Millisecond, 30*time.Millisecond),
			Connect: 5 * time.Millisecond, Status: 200, Cache: stream.CacheHit, TTFTCheck: stream.TTFTOnTime, FinishOmitted: true},
			ClientLag: measure.Of(time.Millisecond), EventLag: 2 * time.Millisecond, Due: t0.Add(-10 * time.Millisecond),
			Goodput: VerdictOf(ok), Regression: No, Origin: Origin{GapSamples: config.GapsPerEvent, ResultGaps: true}}
		if !ok {
			c.Err = &stream.Error{Type: stream.ErrNetwork, Message: "reset"}
		}
		return c
	}
	answered, failed := measuredCall(true), measuredCall(false)
	counted, left := 0, 0
	for i := range Figures {
		f := &Figures[i]
		name := f.Key + " " + f.Metric + " " + f.Keep.Dist.String()
		n := func(c *Call) int {
			k := 0
			f.Samples(c, func(time.Time, float64) { k++ })
			return k
		}
		_, okKept := f.Kept(answered)
		_, failedKept := f.Kept(failed)
		switch f.Failed {
		case AnswersOnly:
			left++
			require.Zerof(t, n(failed), "%s: no sample of a failed call", name)
			require.Falsef(t, failedKept, "%s: not in the report for a failed call", name)
			if f.Key != "" {
				require.Nilf(t, f.JS(failed), "%s: null for a failed call", name)
				require.NotNilf(t, f.JS(answered), "%s: the answered call has it", name)
			}
			require.Truef(t, n(answered) > 0 || f.Metric == "", "%s: the answered call has its samples", name)
		case Counted:
			if f.Kind != Trend && f.Keep.Dist == "" {
				continue // a count or a rate of the outcome itself (llm_errors, llm_goodput)
			}
			require.Equalf(t, n(answered), n(failed), "%s: a failed call's measured figure has its samples", name)
			require.Equalf(t, okKept, failedKept, "%s: and is kept alike", name)
			if f.Metric != "" && !f.Keep.PerEvent && f.Keep.Dist != "" {
				counted++
				require.Equalf(t, 1, n(failed), "%s: one sample", name)
				require.Truef(t, failedKept, "%s: the report keeps the sample's value", name)
				v, _ := f.Kept(failed)
				f.Samples(failed, func(_ time.Time, s float64) { require.InDeltaf(t, v, s, 1e-9, "%s", name) })
				require.InDeltaf(t, v, f.JS(failed), 1e-9, "%s: the JS value is the sample's", name)
			}
		}
	}
	require.GreaterOrEqual(t, counted, 5)
	require.GreaterOrEqual(t, left, 5)
}
