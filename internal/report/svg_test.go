package report

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/record"
)

// roundTicks says why ticks are not ones a reader would write on an axis
// (41.63, 829.4), or "" when they are: on a linear axis, multiples of a step
// of 1, 2, 2.5 or 5 times a power of ten; on a log axis, 1, 1.5, 2, 3, 5 or 7
// times a power of ten (or, on a range narrower than those, a linear axis).
func roundTicks(ticks []float64, log bool) string {
	if len(ticks) < 2 || len(ticks) > 8 {
		return fmt.Sprintf("%d ticks", len(ticks))
	}
	mantissa := func(v float64) float64 { return v / math.Pow(10, math.Floor(math.Log10(v))) }
	near := func(v float64, set ...float64) bool {
		for _, s := range set {
			if math.Abs(v-s) < 1e-6 {
				return true
			}
		}
		return false
	}
	if log {
		ok := true
		for _, v := range ticks {
			ok = ok && v > 0 && near(mantissa(v), 1, 1.5, 2, 3, 5, 7, 10)
		}
		if ok {
			return ""
		}
	}
	step := ticks[1] - ticks[0]
	if !(step > 0) || !near(mantissa(step), 1, 2, 2.5, 5, 10) {
		return fmt.Sprintf("step %g is not round", step)
	}
	for i, v := range ticks {
		if k := v / step; math.Abs(k-math.Round(k)) > 1e-6 || (i > 0 && math.Abs(v-ticks[i-1]-step) > 1e-6*step) {
			return fmt.Sprintf("tick %g is not a multiple of the step %g", v, step)
		}
	}
	return ""
}

func TestTicksAreRound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		lo := math.Exp(rng.Float64()*16 - 8)
		hi := lo * (1.001 + rng.Float64()*math.Pow(10, rng.Float64()*4))
		for name, c := range map[string]struct {
			ticks []float64
			log   bool
		}{
			"linear from 0": {linearTicks(0, hi, false), false}, "linear within": {linearTicksWithin(lo, hi, false), false}, "log": {logTicks(lo, hi), true},
			"whole": {linearTicksWithin(math.Floor(lo), math.Floor(lo)+math.Ceil(hi-lo), true), false},
		} {
			if why := roundTicks(c.ticks, c.log); why != "" {
				t.Fatalf("%s [%g, %g]: %s: %v", name, lo, hi, why, c.ticks)
			}
		}
		for _, v := range linearTicksWithin(lo, lo+hi, true) {
			if v != math.Trunc(v) {
				t.Fatalf("whole ticks over [%g, %g] include %g", lo, lo+hi, v)
			}
		}
		if top := linearTicks(0, hi, false); top[len(top)-1] < hi {
			t.Fatalf("the last tick %g is under the data's top %g", top[len(top)-1], hi)
		}
		for _, v := range append(linearTicksWithin(lo, hi, false), logTicks(lo, hi)...) {
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				t.Fatalf("tick %g outside the data range [%g, %g]", v, lo, hi)
			}
		}
	}
	// The axes the issue saw on a one-stage run, and their like.
	for _, bad := range [][]float64{{0, 41.63, 83.26}, {0, 207.35, 414.7, 622.05, 829.4}, {16, 16.2, 16.5, 16.8, 17}} {
		if roundTicks(bad, false) == "" {
			t.Errorf("%v passes as round", bad)
		}
	}
	if roundTicks([]float64{15.4, 27.5, 48.9, 87}, true) == "" {
		t.Error("log ticks 15.4 … 87 pass as round")
	}
}

var (
	tickValue = regexp.MustCompile(`class="tick" data-axis="([xy])" data-v="([^"]+)"`)
	titleText = regexp.MustCompile(`<text class="title" x="[^"]+" y="([^"]+)"`)
	legendPos = regexp.MustCompile(`<text class="legend" x="([^"]+)" y="([^"]+)">([^<]*)<`)
)

func TestReportChartsHaveRoundTicksAndLegendsUnderTheTitle(t *testing.T) {
	_, doc, _ := sampleReport(t)
	html := string(doc)
	charts := strings.Split(html, `<svg class="chart"`)[1:]
	if len(charts) < len(chartIDs) {
		t.Fatalf("%d charts", len(charts))
	}
	for _, svg := range charts {
		axes := map[string][]float64{}
		for _, m := range tickValue.FindAllStringSubmatch(svg, -1) {
			v, err := strconv.ParseFloat(m[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			axes[m[1]] = append(axes[m[1]], v)
		}
		id, _, _ := strings.Cut(svg, " xmlns")
		if why := roundTicks(axes["y"], false); why != "" {
			t.Errorf("%s: y axis %v: %s", id, axes["y"], why)
		}
		if why := roundTicks(axes["x"], strings.Contains(id, `data-x-scale="log"`)); why != "" {
			t.Errorf("%s: x axis %v: %s", id, axes["x"], why)
		}
	}
	for _, svg := range strings.Split(html, `<svg class="chart"`)[1:] {
		tm := titleText.FindStringSubmatch(svg)
		if tm == nil {
			t.Fatal("a chart without a title")
		}
		ty, _ := strconv.ParseFloat(tm[1], 64)
		for _, l := range legendPos.FindAllStringSubmatch(svg, -1) {
			x, _ := strconv.ParseFloat(l[1], 64)
			y, _ := strconv.ParseFloat(l[2], 64)
			// A 13 px title's baseline, then a 10 px legend row: a key must sit a row below it.
			if y < ty+legendRowHeight {
				t.Errorf("legend %q at y=%g shares the title's line (y=%g)", l[3], y, ty)
			}
			if right := x + 13 + legendCharWidth*float64(len([]rune(l[3]))); right > chartW {
				t.Errorf("legend %q runs past the chart's right edge (%g > %g)", l[3], right, chartW)
			}
		}
	}
}

func TestLegendWrapsManySeries(t *testing.T) {
	c := chart{ID: "x", Title: "t", FmtX: numTick, FmtY: numTick}
	for i := range 12 {
		c.Series = append(c.Series, series{Name: "client-number-" + strconv.Itoa(i), Points: []point{{1, 1}, {2, 2}}})
	}
	items, padT := c.legend()
	rows := map[float64]bool{}
	for _, it := range items {
		rows[it.y] = true
	}
	if len(rows) < 3 || padT <= items[len(items)-1].y {
		t.Fatalf("12 long names on %d legend rows, plot top %g under the last row at %g", len(rows), padT, items[len(items)-1].y)
	}
}

func TestOneStageRunSaysItNeedsAStepLoad(t *testing.T) {
	run := synth{seed: 3, stages: steps(16), hitRate: 0.5}.collect()
	if n := len(run.Stages()); n != 1 {
		t.Fatalf("the synthetic run has %d stages, want 1", n)
	}
	doc := string(RenderHTML(run, nil, RenderOptions{}))
	if !strings.Contains(doc, `<p class="placeholder" id="stage-placeholder">Needs a step load: the whole run was one stage (16 VUs`) {
		t.Errorf("no step-load placeholder in the one-stage report")
	}
	for _, id := range []string{"stage-ttft", "stage-tps", "stage-throughput"} {
		if strings.Contains(doc, `id="`+id+`"`) {
			t.Errorf("a one-stage run draws the chart %s (a lone dot)", id)
		}
	}
	// A step load draws the curves, with a marker on each stage.
	_, step, _ := sampleReport(t)
	if strings.Contains(string(step), "stage-placeholder") {
		t.Error("a four-stage run gets the placeholder")
	}
	m := regexp.MustCompile(`(?s)<svg class="chart" id="stage-ttft".*?</svg>`).FindString(string(step))
	if strings.Count(m, "<polyline") != 2 || strings.Count(m, "<circle") != 8 {
		t.Errorf("stage-ttft: want 2 curves with 4 markers each:\n%s", m)
	}
}

func TestLatencyTablesOnePerMetric(t *testing.T) {
	_, doc, _ := sampleReport(t)
	for _, m := range []record.Dist{record.DistTTFT, record.DistTTFTAnswer, record.DistE2E, record.DistGap, record.DistTPOT} {
		re := regexp.MustCompile(`<table id="latency-` + m.String() + `"><caption>[^<]+</caption><tr><th>category</th><th>mean</th><th>p50</th><th>p95</th><th>p99</th></tr>`)
		if !re.Match(doc) {
			t.Errorf("no latency table of its own for %s", m)
		}
	}
	// No call of the sample run had a due time (no schedule): no empty table for those figures.
	if bytes.Contains(doc, []byte(`id="latency-dispatch_delay"`)) {
		t.Error("a table of dispatch delays in a run without a schedule")
	}
}
