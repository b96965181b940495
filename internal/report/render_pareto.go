package report

import (
	"bytes"
	"cmp"
	"slices"
	"strconv"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// The Pareto chart: each load level's output tokens/s (what the service
// delivers, the throughput per GPU a team pays for) against its per-user
// tokens/s (what each user sees), with the front drawn through the levels
// no other level beats on both. A team reads off the most throughput at
// the interactivity it promises its users.

// runPareto is a run's Pareto points as its record keeps them: a run of
// several clients has stages per client only, so it has the capacity
// search's windows alone.
func runPareto(r *Run) []runrecord.ParetoPoint {
	var stages []runrecord.StageRecord
	if !r.PerClient() {
		stages = stageRecords(r)
	}
	return runrecord.ParetoPoints(stages, r.Capacity)
}

// writeParetoHTML writes the section (nothing with fewer than two points):
// the chart, then the points in a table, since a chart cannot say which
// dot is which level.
func writeParetoHTML(b *bytes.Buffer, pts []runrecord.ParetoPoint) {
	if len(pts) < 2 {
		return
	}
	b.WriteString(`<h2>Throughput against interactivity (Pareto front)</h2><p class="sub">Each load level's output tokens/s against ` +
		`its median call's decode speed. On the front: no other level gave both more throughput and faster streams.</p><div class="charts">`)
	b.WriteString(paretoChart(pts).svg())
	b.WriteString("</div>\n")
	rows := make([][]string, 0, len(pts))
	for _, p := range pts {
		front := ""
		if p.OnFront {
			front = "yes"
		}
		rows = append(rows, []string{p.Source, paretoLevel(p),
			strconv.FormatFloat(p.OutputTokensPerSec, 'f', 1, 64), strconv.FormatFloat(p.PerUserTokensPerSec, 'f', 1, 64), front})
	}
	writeTableHTML(b, "pareto-points", []string{"from", "level", "output tokens/s", "tokens/s per user", "on the front"}, rows)
}

// paretoLevel is a point's level as the stage and capacity sections print it.
func paretoLevel(p runrecord.ParetoPoint) string {
	if p.Source == runrecord.ParetoSourceStage {
		return runrecord.FormatConc(runrecord.RoundLevel(p.Level)) + " " + runrecord.LevelUnit(p.ByRate)
	}
	if p.ByRate {
		return fmtLevel(p.Level) + " req/s"
	}
	return fmtLevel(p.Level) + " in flight"
}

// paretoChart draws the stages in load order (the curve a step load
// traces), the capacity windows by level, and the front dashed.
func paretoChart(pts []runrecord.ParetoPoint) chart {
	var stages, windows []runrecord.ParetoPoint
	for _, p := range pts {
		if p.Source == runrecord.ParetoSourceStage {
			stages = append(stages, p)
		} else {
			windows = append(windows, p)
		}
	}
	byLevel := func(a, b runrecord.ParetoPoint) int { return cmp.Compare(a.Level, b.Level) }
	slices.SortStableFunc(stages, byLevel)
	slices.SortStableFunc(windows, byLevel)
	c := chart{ID: "pareto", Title: "Output tokens/s against tokens/s per user", XLabel: "tokens/s per user (median call)",
		YLabel: "output tokens/s (all calls)", FmtX: numTick, FmtY: numTick}
	if len(stages) > 0 {
		c.Series = append(c.Series, series{Name: "load stages", Points: paretoSeries(stages)})
	}
	if len(windows) > 0 {
		c.Series = append(c.Series, series{Name: "capacity windows", Points: paretoSeries(windows)})
	}
	c.Series = append(c.Series, series{Name: "Pareto front", Dashed: true, Points: paretoSeries(runrecord.ParetoFront(pts))})
	return c
}

func paretoSeries(pts []runrecord.ParetoPoint) []point {
	out := make([]point, len(pts))
	for i, p := range pts {
		out[i] = point{p.PerUserTokensPerSec, p.OutputTokensPerSec}
	}
	return out
}
