package report

// Live conversations' section: TTFT by turn, split by whether the server
// served the prompt's prefix from its cache (its reported cached tokens),
// and the jobs' own figures per kind and category. A later turn carries a
// longer history; with prefix reuse its TTFT stays near the first turn's,
// without it TTFT grows with the history: the split shows which.

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
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
	// sent in (jobs_stages.go).
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

var (
	turnColumns = []string{"turn", "cache", "calls", "TTFT p50", "TTFT p95"}                                                             //nolint:gochecknoglobals // read-only table
	jobColumns  = []string{"job", "category", "jobs", "failed", "dur p50", "dur p95", "model avg", "think avg", "tool avg", "turns avg"} //nolint:gochecknoglobals // read-only table
)

func (g *TurnGroup) cells() []string {
	turn := fmt.Sprint(g.Turn)
	if g.Turn == maxTurnRow {
		turn += "+"
	}
	return []string{turn, g.Cache, fmt.Sprint(g.Calls), fmtMS(g.TTFT.Quantile(0.5)), fmtMS(g.TTFT.Quantile(0.95))}
}

func (g *JobGroup) cells() []string {
	avg := func(d time.Duration) string { return fmtMS(float64(d) / float64(time.Millisecond) / float64(g.Jobs)) }
	return []string{g.Kind, g.Category, fmt.Sprint(g.Jobs), fmt.Sprint(g.Failed),
		fmtMS(g.Duration.Quantile(0.5)), fmtMS(g.Duration.Quantile(0.95)),
		avg(g.Model), avg(g.Think), avg(g.Tool), fmt.Sprintf("%.1f", float64(g.Turns)/float64(g.Jobs))}
}

// ConversationText is the section's text: "" without conversations.
func ConversationText(turns []*TurnGroup, jobs []*JobGroup, stages []JobStage, stageNote string) string {
	var b strings.Builder
	if len(turns) > 0 {
		b.WriteString("TTFT by conversation turn (answered turns; cache: the server's cached prompt tokens, unknown when it reported none)\n")
		widths := []int{-5, -8, 7, 10, 10}
		writeCells(&b, widths, turnColumns)
		for _, g := range turns {
			writeCells(&b, widths, g.cells())
		}
	}
	if len(jobs) > 0 {
		b.WriteString("Conversations and agent jobs (duration: first send to last answer, think time included)\n")
		widths := []int{-13, -14, 6, 7, 9, 9, 10, 10, 9, 10}
		writeCells(&b, widths, jobColumns)
		for _, g := range jobs {
			writeCells(&b, widths, g.cells())
		}
	}
	b.WriteString(jobStagesText(stages, stageNote))
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

func conversationRecord(turns []*TurnGroup, jobs []*JobGroup, stages []JobStage, stageNote string) *runrecord.ConversationRecord {
	if len(turns) == 0 && len(jobs) == 0 {
		return nil
	}
	out := &runrecord.ConversationRecord{Jobs: jobRecords(jobs), Stages: jobStageRecords(stages), StageNote: stageNote}
	for _, g := range turns {
		out.Turns = append(out.Turns, runrecord.TurnRecord{Turn: g.Turn, Cache: g.Cache, Calls: g.Calls, TTFT: metricRecord(g.TTFT)})
	}
	return out
}

// jobRecords are job groups in the record: sums become means per job.
func jobRecords(jobs []*JobGroup) []runrecord.JobRecord {
	out := make([]runrecord.JobRecord, 0, len(jobs))
	for _, g := range jobs {
		n := float64(g.Jobs)
		mean := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
		out = append(out, runrecord.JobRecord{Kind: g.Kind, Category: g.Category, Jobs: g.Jobs, Failed: g.Failed,
			Duration: metricRecord(g.Duration), ModelMean: mean(g.Model), ThinkMean: mean(g.Think), ToolMean: mean(g.Tool),
			TurnsMean: float64(g.Turns) / n, StepsMean: float64(g.Steps) / n, TokensOut: g.TokensOut})
	}
	return out
}

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
