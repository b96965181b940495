package report

// Live conversations' section: TTFT by turn, split by whether the server
// served the prompt's prefix from its cache (its reported cached tokens),
// and the jobs' own figures per kind and category. A later turn carries a
// longer history; with prefix reuse its TTFT stays near the first turn's,
// without it TTFT grows with the history: the split shows which.

import (
	"sort"
	"sync"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

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

// NewConversationCollector makes an empty collector leaving out what opt says.
func NewConversationCollector(opt Options) *ConversationCollector {
	return &ConversationCollector{exclude: newExcluder(opt.Exclude), turns: map[turnKey]*TurnGroup{}, jobs: map[jobKey]*JobGroup{},
		byLevel: map[levelJobKey]*JobGroup{}}
}

// Add records a conversation turn with a TTFT (a failed turn's too, as the
// TTFT row counts it); other calls are ignored.
func (c *ConversationCollector) Add(o *Observation) {
	if o == nil || o.Turn == 0 {
		return
	}
	v, ok := rowTTFT.Kept(o)
	if !ok {
		return
	}
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
