package report

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

var (
	turnColumns = []string{"turn", "cache", "calls", "TTFT p50", "TTFT p95"}                                                             //nolint:gochecknoglobals // read-only table
	jobColumns  = []string{"job", "category", "jobs", "failed", "dur p50", "dur p95", "model avg", "think avg", "tool avg", "turns avg"} //nolint:gochecknoglobals // read-only table
)

func (g *TurnGroup) cells() []string {
	turn := fmt.Sprint(g.Turn)
	if g.Turn == maxTurnRow {
		turn += "+"
	}
	return []string{turn, g.Cache, fmt.Sprint(g.Calls), fmtQuantileMS(g.TTFT, 0.5), fmtQuantileMS(g.TTFT, 0.95)}
}

func (g *JobGroup) cells() []string {
	avg := func(d time.Duration) string { return fmtMS(float64(d) / float64(time.Millisecond) / float64(g.Jobs)) }
	return []string{g.Kind, g.Category, fmt.Sprint(g.Jobs), fmt.Sprint(g.Failed),
		fmtQuantileMS(g.Duration, 0.5), fmtQuantileMS(g.Duration, 0.95),
		avg(g.Model), avg(g.Think), avg(g.Tool), fmt.Sprintf("%.1f", float64(g.Turns)/float64(g.Jobs))}
}

// ConversationText is the section's text: "" without conversations.
func ConversationText(turns []*TurnGroup, jobs []*JobGroup, stages []JobStage, stageNote string) string {
	var b strings.Builder
	starred := false
	if len(turns) > 0 {
		b.WriteString("TTFT by conversation turn (turns with a TTFT; cache: the server's cached prompt tokens, unknown when it reported none)\n")
		widths := []int{-5, -8, 7, 18, 18}
		writeCells(&b, widths, turnColumns)
		for _, g := range turns {
			cells := g.cells()
			starred = starred || anyStarred(cells)
			writeCells(&b, widths, cells)
		}
	}
	if len(jobs) > 0 {
		b.WriteString("Conversations and agent jobs (duration: first send to last answer, think time included)\n")
		widths := []int{-13, -14, 6, 7, 18, 18, 10, 10, 9, 10}
		writeCells(&b, widths, jobColumns)
		for _, g := range jobs {
			cells := g.cells()
			starred = starred || anyStarred(cells)
			writeCells(&b, widths, cells)
		}
	}
	b.WriteString(jobStagesText(stages, stageNote))
	writeTooFewLegend(&b, starred || anyStarredRows(jobStageRows(stages)))
	return b.String()
}

// writeConversationsHTML writes the section's tables.
func writeConversationsHTML(b *bytes.Buffer, turns []*TurnGroup, jobs []*JobGroup, stages []JobStage, stageNote string) {
	if len(turns) == 0 && len(jobs) == 0 {
		return
	}
	b.WriteString(`<h2>Conversations</h2><p class="sub">TTFT by turn, split by the server's cached prompt tokens ` +
		`(prefix reuse keeps later turns' TTFT near the first's); jobs: first send to last answer, think time included.</p>`)
	rows := make([][]string, len(turns))
	for i, g := range turns {
		rows[i] = g.cells()
	}
	if len(rows) > 0 {
		writeTableHTML(b, "turns", turnColumns, rows)
	}
	rows = make([][]string, len(jobs))
	for i, g := range jobs {
		rows[i] = g.cells()
	}
	if len(rows) > 0 {
		writeTableHTML(b, "jobs", jobColumns, rows)
	}
	writeJobStagesHTML(b, stages, stageNote)
}

func (s *JobStage) label() string {
	return runrecord.FormatConc(runrecord.RoundLevel(s.Concurrency)) + " " + runrecord.LevelUnit(s.ByRate)
}

var jobStageColumns = append([]string{"stage"}, jobColumns...) //nolint:gochecknoglobals // read-only table

func jobStageRows(stages []JobStage) [][]string {
	var rows [][]string
	for i := range stages {
		for _, g := range stages[i].Jobs {
			rows = append(rows, append([]string{stages[i].label()}, g.cells()...))
		}
	}
	return rows
}

// jobStagesText is the per-stage table's text ("" without stages); note
// says why a merged record has none.
func jobStagesText(stages []JobStage, note string) string {
	var b strings.Builder
	if len(stages) > 0 {
		b.WriteString("Jobs by load stage (the stage each job's first call was sent in)\n")
		widths := []int{-11, -13, -14, 6, 7, 18, 18, 10, 10, 9, 10}
		writeCells(&b, widths, jobStageColumns)
		for _, row := range jobStageRows(stages) {
			writeCells(&b, widths, row)
		}
	}
	if note != "" {
		fmt.Fprintf(&b, "Jobs by load stage: %s\n", note)
	}
	return b.String()
}

func writeJobStagesHTML(b *bytes.Buffer, stages []JobStage, note string) {
	if len(stages) > 0 {
		b.WriteString(`<p class="sub">Jobs by load stage: each job in the stage its first call was sent in.</p>`)
		writeTableHTML(b, "job-stages", jobStageColumns, jobStageRows(stages))
	}
	if note != "" {
		fmt.Fprintf(b, `<p class="sub">Jobs by load stage: %s</p>`, note)
	}
}
