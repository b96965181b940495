package report

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// jobGroupsOf turns job records back into groups: the means become sums again.
func jobGroupsOf(recs []runrecord.JobRecord) []*JobGroup {
	out := make([]*JobGroup, 0, len(recs))
	for _, j := range recs {
		n := float64(j.Jobs)
		out = append(out, &JobGroup{Kind: j.Kind, Category: j.Category, Jobs: j.Jobs, Failed: j.Failed,
			Duration: sketchOf(j.Duration), Model: msDuration(j.ModelMean * n), Think: msDuration(j.ThinkMean * n),
			Tool: msDuration(j.ToolMean * n), Turns: roundCount(j.TurnsMean * n), Steps: roundCount(j.StepsMean * n),
			TokensOut: j.TokensOut})
	}
	return out
}

// mergeJobGroups adds groups into m by kind and category.
func mergeJobGroups(m map[jobKey]*JobGroup, groups []*JobGroup) error {
	for _, j := range groups {
		k := jobKey{Kind: j.Kind, Category: j.Category}
		g := m[k]
		if g == nil {
			g = &JobGroup{Kind: j.Kind, Category: j.Category}
			m[k] = g
		}
		g.Jobs += j.Jobs
		g.Failed += j.Failed
		g.Model += j.Model
		g.Think += j.Think
		g.Tool += j.Tool
		g.Turns += j.Turns
		g.Steps += j.Steps
		g.TokensOut += j.TokensOut
		if err := mergeSketch(&g.Duration, j.Duration); err != nil {
			return fmt.Errorf("job %s/%s: %w", j.Kind, j.Category, err)
		}
	}
	return nil
}

func sortedJobGroups(m map[jobKey]*JobGroup) []*JobGroup {
	out := make([]*JobGroup, 0, len(m))
	for _, g := range m {
		out = append(out, g)
	}
	sortJobGroups(out)
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
			m.First, m.Last = earlierOf(m.First, s.First), laterOf(m.Last, s.Last)
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

func earlierOf(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

func laterOf(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// sketchOf is a record's sketch, an empty one when it has none.
func sketchOf(mr *runrecord.MetricRecord) *sketch.Sketch {
	if mr == nil || mr.Sketch == nil {
		return sketch.New(sketch.FineAlpha)
	}
	return mr.Sketch
}

func roundCount(v float64) uint64 { return uint64(max(0, v+0.5)) } // #nosec G115 -- a non-negative count

// conversationGroups turns the section's record back into groups: the jobs'
// means become sums again.
func conversationGroups(c *runrecord.ConversationRecord) ([]*TurnGroup, []*JobGroup, []JobStage, string) {
	if c == nil {
		return nil, nil, nil, ""
	}
	turns := make([]*TurnGroup, 0, len(c.Turns))
	for _, t := range c.Turns {
		turns = append(turns, &TurnGroup{Turn: t.Turn, Cache: t.Cache, Calls: t.Calls, TTFT: sketchOf(t.TTFT)})
	}
	return turns, jobGroupsOf(c.Jobs), jobStagesOf(c.Stages), c.StageNote
}

func msDuration(v float64) time.Duration {
	return time.Duration(math.Round(v * float64(time.Millisecond)))
}

// mergeConversations merges the turn groups by turn and cache state and the
// job groups by kind and category (and by stage, mergeJobStages); the jobs'
// means are turned back into sums (conversationGroups), summed, and divided
// by the union's jobs.
func mergeConversations(records []*runrecord.Record) (*runrecord.ConversationRecord, error) {
	turns := map[turnKey]*TurnGroup{}
	jobs := map[jobKey]*JobGroup{}
	var stages [][]JobStage
	for _, r := range records {
		ts, js, ss, _ := conversationGroups(r.Conversations)
		for _, t := range ts {
			k := turnKey{Turn: t.Turn, Cache: t.Cache}
			g := turns[k]
			if g == nil {
				g = &TurnGroup{Turn: t.Turn, Cache: t.Cache}
				turns[k] = g
			}
			g.Calls += t.Calls
			if err := mergeSketch(&g.TTFT, t.TTFT); err != nil {
				return nil, fmt.Errorf("turn %d %s: %w", t.Turn, t.Cache, err)
			}
		}
		if err := mergeJobGroups(jobs, js); err != nil {
			return nil, err
		}
		stages = append(stages, ss)
	}
	ts := make([]*TurnGroup, 0, len(turns))
	for _, g := range turns {
		ts = append(ts, g)
	}
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Turn != ts[j].Turn {
			return ts[i].Turn < ts[j].Turn
		}
		return ts[i].Cache < ts[j].Cache
	})
	ss, note, err := mergeJobStages(stages)
	if err != nil {
		return nil, err
	}
	return conversationRecord(ts, sortedJobGroups(jobs), ss, note), nil
}
