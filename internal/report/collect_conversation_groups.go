package report

import (
	"sort"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// maxTurnRow is the last turn with a row of its own (later turns share it).
const maxTurnRow = 10

type turnKey struct {
	Turn  int
	Cache string
}

type jobKey struct{ Kind, Category string }

// TurnGroup is the answered turns of one number and one cache state.
type TurnGroup struct {
	Turn  int    // maxTurnRow stands for that turn and later ones
	Cache string // hit, miss or unknown (the server reported no cached count)
	Calls uint64
	TTFT  *sketch.Sketch
}

// JobGroup is the jobs of one kind and category.
type JobGroup struct {
	Kind, Category     string
	Jobs, Failed       uint64
	Duration           *sketch.Sketch
	Model, Think, Tool time.Duration // sums
	Turns, Steps       uint64
	TokensOut          int64
}

func newJobGroup(k jobKey) *JobGroup {
	return &JobGroup{Kind: k.Kind, Category: k.Category, Duration: sketch.New(sketch.FineAlpha)}
}

// add counts one job into the group.
func (g *JobGroup) add(j *record.Job) {
	g.Jobs++
	if j.Failed {
		g.Failed++
	}
	g.Duration.Add(max(measure.MS(j.Duration(j.End)), 0))
	g.Model += j.Model
	g.Think += j.Think
	g.Tool += j.Tool
	g.Turns += uint64(j.Turns) // #nosec G115 -- a count, never negative
	g.Steps += uint64(j.Steps) // #nosec G115 -- a count, never negative
	g.TokensOut += j.TokensOut
}

// clone copies the group, its sketch too: the collector goes on adding.
func (g *JobGroup) clone() *JobGroup {
	cp := *g
	cp.Duration = g.Duration.Clone()
	return &cp
}

func sortJobGroups(jobs []*JobGroup) {
	sort.Slice(jobs, func(i, j int) bool {
		if jobs[i].Kind != jobs[j].Kind {
			return jobs[i].Kind < jobs[j].Kind
		}
		return jobs[i].Category < jobs[j].Category
	})
}

// Conversations is the section's groups: the answered turns (by turn, then
// cache state), the jobs (by kind, then category) and the jobs by the load
// class of their first call.
type Conversations struct {
	Turns   []*TurnGroup
	Jobs    []*JobGroup
	ByLevel map[int][]*JobGroup
}
