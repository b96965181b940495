package report

// Jobs by load stage: a conversation or agent job spans many calls, which
// may start in several stages of a step load; it is counted in the stage
// its first call was sent in, the load its user arrived into. Only stages
// the calls found (stages.go) have rows: a job that started during a ramp
// is in the jobs table but in no stage.

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// levelJobKey is a job group of one load class.
type levelJobKey struct {
	Class int
	jobKey
}

// loadClass is the load class of a job's first call, as levelClass keys the
// calls themselves.
func loadClass(l record.Load) int {
	return levelClass(&Observation{Active: l.Active, VUs: l.VUs, Rate: l.Rate})
}

// JobStage is the jobs whose first call was sent in one load stage.
type JobStage struct {
	Concurrency float64 // the stage's level: mean VUs, or the arrival rate when ByRate
	ByRate      bool
	First, Last time.Time // the stage's first and last call start
	Jobs        []*JobGroup
}

// JobStages are the run's stages that had jobs start in them, lowest level
// first; none when the run had fewer than two stages (the jobs table is
// then the one stage).
func (r *Run) JobStages() []JobStage {
	stages := r.Stages()
	if len(stages) < 2 || len(r.jobLevels) == 0 {
		return nil
	}
	var out []JobStage
	for _, st := range stages {
		if gs := r.jobLevels[st.Class]; len(gs) > 0 {
			out = append(out, JobStage{Concurrency: st.Concurrency, ByRate: st.ByRate, First: st.First, Last: st.Last, Jobs: gs})
		}
	}
	return out
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
		widths := []int{-11, -13, -14, 6, 7, 9, 9, 10, 10, 9, 10}
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

func jobStageRecords(stages []JobStage) []runrecord.JobStageRecord {
	var out []runrecord.JobStageRecord
	for i := range stages {
		s := &stages[i]
		out = append(out, runrecord.JobStageRecord{Concurrency: s.Concurrency, ByRate: s.ByRate, First: s.First, Last: s.Last,
			Jobs: jobRecords(s.Jobs)})
	}
	return out
}

// jobStagesOf turns the records back into stages (means back into sums).
func jobStagesOf(recs []runrecord.JobStageRecord) []JobStage {
	out := make([]JobStage, 0, len(recs))
	for _, r := range recs {
		out = append(out, JobStage{Concurrency: r.Concurrency, ByRate: r.ByRate, First: r.First, Last: r.Last,
			Jobs: jobGroupsOf(r.Jobs)})
	}
	return out
}

// mergeJobStages merges the instances' jobs by stage. Instances on
// execution segments each find the stages of their share of the load, so
// the i-th stage of every instance is the i-th of the whole test when every
// instance found as many stages, of one kind, and each i-th overlaps the
// others' in time (the shares of a level ran at once). Its level is then
// the instances' VU levels summed (each ran its share of the VUs), or the
// arrival rate they saw (each reads the scenario's whole rate). Otherwise no
// stage of the whole test is known: none is merged and the note says why.
func mergeJobStages(parts [][]JobStage) ([]JobStage, string, error) {
	have := 0
	for _, p := range parts {
		if len(p) > 0 {
			have++
		}
	}
	if have == 0 {
		return nil, "", nil
	}
	if note := jobStagesApart(parts); note != "" {
		return nil, note, nil
	}
	out := make([]JobStage, len(parts[0]))
	for i := range out {
		m := &out[i]
		*m = JobStage{ByRate: parts[0][i].ByRate, First: parts[0][i].First, Last: parts[0][i].Last}
		groups := map[jobKey]*JobGroup{}
		for _, p := range parts {
			s := p[i]
			if s.ByRate {
				m.Concurrency += s.Concurrency / float64(len(parts))
			} else {
				m.Concurrency += s.Concurrency
			}
			m.First, m.Last = earlier(m.First, s.First), later(m.Last, s.Last)
			if err := mergeJobGroups(groups, s.Jobs); err != nil {
				return nil, "", fmt.Errorf("stage %d: %w", i+1, err)
			}
		}
		m.Jobs = sortedJobGroups(groups)
	}
	return out, "", nil
}

// jobStagesApart says why the parts' stages do not line up ("" when they do).
func jobStagesApart(parts [][]JobStage) string {
	for i, p := range parts[1:] {
		if len(p) != len(parts[0]) {
			return fmt.Sprintf("not merged: the instances found different load stages (%d and %d with jobs); see each instance's report",
				len(parts[0]), len(p))
		}
		for k := range p {
			a, b := parts[0][k], p[k]
			if a.ByRate != b.ByRate || a.Last.Before(b.First) || b.Last.Before(a.First) {
				return fmt.Sprintf("not merged: stage %d of instance 1 and of instance %d did not run at once; see each instance's report", k+1, i+2)
			}
		}
	}
	return ""
}

func earlier(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
