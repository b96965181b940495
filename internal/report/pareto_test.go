package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// TestParetoOfAStepLoad: a step load whose streams slow down as VUs rise
// records one point per stage, each the stage's own output tokens/s and
// median decode speed, and the HTML draws them with the front; a run held
// at one level has neither.
func TestParetoOfAStepLoad(t *testing.T) {
	s := synth{seed: 5, stages: steps(4, 8, 16, 32), tpsAt: func(vus int) float64 { return 80 - 2*float64(vus) }}
	rec := recordOf(t, s)
	if len(rec.Stages) != 4 {
		t.Fatalf("the synthetic run has %d stages, want 4", len(rec.Stages))
	}
	if len(rec.Pareto) != len(rec.Stages) {
		t.Fatalf("pareto has %d points for %d stages: %+v", len(rec.Pareto), len(rec.Stages), rec.Pareto)
	}
	for i, p := range rec.Pareto {
		st := rec.Stages[i]
		if p.Source != runrecord.ParetoSourceStage || p.Level != st.Concurrency ||
			p.OutputTokensPerSec != st.OutputTokensPerSec || p.PerUserTokensPerSec != st.TokensPerSecP50 {
			t.Errorf("point %d %+v is not stage %+v", i, p, st)
		}
	}
	// Up to 16 VUs each step lowered the streams' speed and, closed-loop,
	// raised the throughput: each a choice. At 32 the decode slowed so much
	// that fewer tokens came out in all: 16 VUs beat it on both.
	st := rec.Stages
	for i := 1; i < 3; i++ {
		if !(st[i].TokensPerSecP50 < st[i-1].TokensPerSecP50) || !(st[i].OutputTokensPerSec > st[i-1].OutputTokensPerSec) {
			t.Fatalf("the synthetic step load does not trade speed for throughput up to 16 VUs: %+v", st)
		}
	}
	if !(st[3].TokensPerSecP50 < st[2].TokensPerSecP50) || !(st[3].OutputTokensPerSec < st[2].OutputTokensPerSec) {
		t.Fatalf("the synthetic run is not past its knee at 32 VUs: %+v", st)
	}
	for i, want := range []bool{true, true, true, false} {
		if rec.Pareto[i].OnFront != want {
			t.Errorf("level %g: on the front %v, want %v", rec.Pareto[i].Level, rec.Pareto[i].OnFront, want)
		}
	}

	doc := string(RenderHTML(s.collect(), nil, RenderOptions{}))
	chart := regexp.MustCompile(`(?s)<svg class="chart" id="pareto".*?</svg>`).FindString(doc)
	if chart == "" {
		t.Fatal("no pareto chart in the step-load report")
	}
	if strings.Count(chart, "<circle") != 4+3 || !strings.Contains(chart, `data-series="Pareto front"`) {
		t.Errorf("pareto: want the 4 stages and the 3 front points marked, and the front drawn:\n%s", chart)
	}
	if strings.Count(doc, "<tr><td>stage</td>") != 4 {
		t.Error("the pareto-points table lists not every stage")
	}

	one := synth{seed: 3, stages: steps(16)}
	if rec := recordOf(t, one); rec.Pareto != nil {
		t.Errorf("a one-stage run has Pareto points: %+v", rec.Pareto)
	}
	if strings.Contains(string(RenderHTML(one.collect(), nil, RenderOptions{})), `id="pareto"`) {
		t.Error("a one-stage run draws a Pareto chart")
	}
}
