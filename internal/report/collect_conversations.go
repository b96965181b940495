package report

// Live conversations' section: TTFT by turn, split by whether the server
// served the prompt's prefix from its cache (its reported cached tokens),
// and the jobs' own figures per kind and category. A later turn carries a
// longer history; with prefix reuse its TTFT stays near the first turn's,
// without it TTFT grows with the history: the split shows which.

import (
	"sort"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// maxTurnRow is the last turn with a row of its own (later turns share it).
const maxTurnRow = 10

// ConversationCollector gathers the answered turns' TTFT and the jobs.
type ConversationCollector struct {
	mu      sync.Mutex
	exclude *excluder
	turns   map[turnKey]*TurnGroup
	jobs    map[jobKey]*JobGroup
	// byLevel are the jobs again, by the load class their first call was
	// sent in (collect_job_stages.go).
	byLevel map[levelJobKey]*JobGroup
}

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

// NewConversationCollector makes an empty collector leaving out what opt says.
func NewConversationCollector(opt Options) *ConversationCollector {
	return &ConversationCollector{exclude: newExcluder(opt.Exclude), turns: map[turnKey]*TurnGroup{}, jobs: map[jobKey]*JobGroup{},
		byLevel: map[levelJobKey]*JobGroup{}}
}

// Add records an answered conversation turn with a measured TTFT; other
// calls are ignored.
func (c *ConversationCollector) Add(o *Observation) {
	if o == nil || o.Turn == 0 || !o.OK || o.TTFT < 0 {
		return
	}
	v, _ := ms(o.TTFT)
	key := turnKey{Turn: min(o.Turn, maxTurnRow), Cache: o.Cache.String()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exclude.leaveOut(o) {
		return
	}
	g := c.turns[key]
	if g == nil {
		g = &TurnGroup{Turn: key.Turn, Cache: key.Cache, TTFT: sketch.New(sketch.FineAlpha)}
		c.turns[key] = g
	}
	g.Calls++
	g.TTFT.Add(v)
}

// AddJob records a finished job.
func (c *ConversationCollector) AddJob(j *record.Job) {
	if j == nil || j.Start.IsZero() {
		return
	}
	key := jobKey{Kind: j.Kind, Category: j.Category}
	if key.Category == "" {
		key.Category = "default"
	}
	lk := levelJobKey{Class: loadClass(j.Load), jobKey: key}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.jobs[key] == nil {
		c.jobs[key] = newJobGroup(key)
	}
	if c.byLevel[lk] == nil {
		c.byLevel[lk] = newJobGroup(key)
	}
	c.jobs[key].add(j)
	c.byLevel[lk].add(j)
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
	d, _ := ms(j.Duration(j.End))
	g.Duration.Add(d)
	g.Model += j.Model
	g.Think += j.Think
	g.Tool += j.Tool
	g.Turns += uint64(j.Turns) // #nosec G115 -- a count, never negative
	g.Steps += uint64(j.Steps) // #nosec G115 -- a count, never negative
	g.TokensOut += j.TokensOut
}

// Conversations is the section's groups: the answered turns (by turn, then
// cache state), the jobs (by kind, then category) and the jobs by the load
// class of their first call.
type Conversations struct {
	Turns   []*TurnGroup
	Jobs    []*JobGroup
	ByLevel map[int][]*JobGroup
}

// Groups are the section's groups, copies.
func (c *ConversationCollector) Groups() Conversations {
	c.mu.Lock()
	defer c.mu.Unlock()
	turns := make([]*TurnGroup, 0, len(c.turns))
	for _, g := range c.turns {
		cp := *g
		turns = append(turns, &cp)
	}
	sort.Slice(turns, func(i, j int) bool {
		if turns[i].Turn != turns[j].Turn {
			return turns[i].Turn < turns[j].Turn
		}
		return turns[i].Cache < turns[j].Cache
	})
	jobs := make([]*JobGroup, 0, len(c.jobs))
	for _, g := range c.jobs {
		jobs = append(jobs, g.clone())
	}
	sortJobGroups(jobs)
	byLevel := map[int][]*JobGroup{}
	for k, g := range c.byLevel {
		byLevel[k.Class] = append(byLevel[k.Class], g.clone())
	}
	for _, gs := range byLevel {
		sortJobGroups(gs)
	}
	return Conversations{Turns: turns, Jobs: jobs, ByLevel: byLevel}
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

// SetConversations gives the run its conversations' groups.
func (r *Run) SetConversations(c Conversations) {
	r.Turns, r.Jobs, r.jobLevels = c.Turns, c.Jobs, c.ByLevel
}
