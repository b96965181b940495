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
)

// maxTurnRow is the last turn with a row of its own (later turns share it).
const maxTurnRow = 10

// ConversationCollector gathers the answered turns' TTFT and the jobs.
type ConversationCollector struct {
	mu      sync.Mutex
	exclude *excluder
	turns   map[turnKey]*TurnGroup
	jobs    map[jobKey]*JobGroup
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
	TTFT  *Sketch
}

// JobGroup is the jobs of one kind and category.
type JobGroup struct {
	Kind, Category     string
	Jobs, Failed       uint64
	Duration           *Sketch
	Model, Think, Tool time.Duration // sums
	Turns, Steps       uint64
	TokensOut          int64
}

// NewConversationCollector makes an empty collector leaving out what opt says.
func NewConversationCollector(opt Options) *ConversationCollector {
	return &ConversationCollector{exclude: newExcluder(opt.Exclude), turns: map[turnKey]*TurnGroup{}, jobs: map[jobKey]*JobGroup{}}
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
		g = &TurnGroup{Turn: key.Turn, Cache: key.Cache, TTFT: NewSketch(FineAlpha)}
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
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.jobs[key]
	if g == nil {
		g = &JobGroup{Kind: key.Kind, Category: key.Category, Duration: NewSketch(FineAlpha)}
		c.jobs[key] = g
	}
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

// Groups are the turn groups (by turn, then cache state) and the job groups
// (by kind, then category), copies.
func (c *ConversationCollector) Groups() ([]*TurnGroup, []*JobGroup) {
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
		cp := *g
		jobs = append(jobs, &cp)
	}
	sort.Slice(jobs, func(i, j int) bool {
		if jobs[i].Kind != jobs[j].Kind {
			return jobs[i].Kind < jobs[j].Kind
		}
		return jobs[i].Category < jobs[j].Category
	})
	return turns, jobs
}

// SetConversations gives the run its conversations' groups.
func (r *Run) SetConversations(turns []*TurnGroup, jobs []*JobGroup) {
	r.Turns, r.Jobs = turns, jobs
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
func ConversationText(turns []*TurnGroup, jobs []*JobGroup) string {
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
	return b.String()
}

// writeConversationsHTML writes the section's tables.
func writeConversationsHTML(b *bytes.Buffer, turns []*TurnGroup, jobs []*JobGroup) {
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
}

// ConversationRecord is the section in the run record.
type ConversationRecord struct {
	Turns []TurnRecord `json:"turns,omitempty"`
	Jobs  []JobRecord  `json:"jobs,omitempty"`
}

// TurnRecord is one turn group in the run record.
type TurnRecord struct {
	Turn  int           `json:"turn"` // the last row holds that turn and later ones
	Cache string        `json:"cache"`
	Calls uint64        `json:"calls"`
	TTFT  *MetricRecord `json:"ttft"`
}

// JobRecord is one job group in the run record (times in ms, means per job).
type JobRecord struct {
	Kind      string        `json:"kind"`
	Category  string        `json:"category"`
	Jobs      uint64        `json:"jobs"`
	Failed    uint64        `json:"failed"`
	Duration  *MetricRecord `json:"duration"`
	ModelMean float64       `json:"model_mean"`
	ThinkMean float64       `json:"think_mean"`
	ToolMean  float64       `json:"tool_mean"`
	TurnsMean float64       `json:"turns_mean"`
	StepsMean float64       `json:"steps_mean"`
	TokensOut int64         `json:"tokens_out"`
}

func conversationRecord(turns []*TurnGroup, jobs []*JobGroup) *ConversationRecord {
	if len(turns) == 0 && len(jobs) == 0 {
		return nil
	}
	out := &ConversationRecord{}
	for _, g := range turns {
		out.Turns = append(out.Turns, TurnRecord{Turn: g.Turn, Cache: g.Cache, Calls: g.Calls, TTFT: metricRecord(g.TTFT)})
	}
	for _, g := range jobs {
		n := float64(g.Jobs)
		mean := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / n }
		out.Jobs = append(out.Jobs, JobRecord{Kind: g.Kind, Category: g.Category, Jobs: g.Jobs, Failed: g.Failed,
			Duration: metricRecord(g.Duration), ModelMean: mean(g.Model), ThinkMean: mean(g.Think), ToolMean: mean(g.Tool),
			TurnsMean: float64(g.Turns) / n, StepsMean: float64(g.Steps) / n, TokensOut: g.TokensOut})
	}
	return out
}
