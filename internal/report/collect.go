package report

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Options tune a Collector. The zero value is usable.
type Options struct {
	// Start is the test start; the timeline begins there (zero: at the first call).
	Start time.Time
	// MaxBuckets caps the timeline; beyond it neighbouring buckets merge (default 3600).
	MaxBuckets int
	// ReservoirSize is how many calls per category are kept for the bootstrap (default 2000).
	ReservoirSize int
	// Seed makes the reservoirs and the bootstrap reproducible (default 1).
	Seed uint64
	// ShortPromptTokens / LongPromptTokens classify prompts for the head-of-line
	// rule when the server reports prompt tokens (defaults 500 and 2000).
	ShortPromptTokens, LongPromptTokens int64
	// MinStage is how long calls must keep starting at one concurrency for it
	// to be a stage. Zero: relative to the calls themselves, stageCallSpans
	// median call durations and at least minStageFloor (collect_collect_stages.go).
	MinStage time.Duration
	// Exclude says which calls stay out of the report (warm-up, scenarios, tags, setup/teardown).
	Exclude Exclude
}

// Validate names the first option that cannot be applied.
func (o Options) Validate() error {
	if o.MinStage < 0 {
		return fmt.Errorf("minStage must not be negative (got %s)", o.MinStage)
	}
	return o.Exclude.validate()
}

func (o Options) withDefaults() Options {
	if o.MaxBuckets <= 0 {
		o.MaxBuckets = 3600
	}
	if o.ReservoirSize <= 0 {
		o.ReservoirSize = 2000
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.ShortPromptTokens <= 0 {
		o.ShortPromptTokens = 500
	}
	if o.LongPromptTokens <= 0 {
		o.LongPromptTokens = 2000
	}
	return o
}

type groupKey struct {
	Client, Category, Model, Route string
	Level                          int
}

// Collector aggregates observations from every VU of a process. It is safe
// for concurrent use; its memory depends on the number of clients,
// categories, models and concurrency classes, never on the length of the test.
type Collector struct {
	opt Options

	mu      sync.Mutex
	exclude *excluder
	groups  map[groupKey]*Group
	whole   *part            // the whole run
	clients map[string]*part // each client alone, once a second client appears
	first   string           // the one client seen until a second appears
	seenAny bool
	pairs   *pairer

	scratch sync.Pool // *gapScratch
}

// part is what the collector keeps per view of the run (the whole run, or
// one client of several): the load levels, the timeline and the reservoirs.
type part struct {
	levels      map[int]*levelInfo
	timeline    *Timeline
	reservoirs  map[string]*reservoir
	first, last time.Time // earliest call start, latest call end
	seedName    string    // keeps each client's reservoirs independent
}

func newPart(opt Options, seedName string) *part {
	return &part{levels: map[int]*levelInfo{}, timeline: newTimeline(opt.Start, opt.MaxBuckets),
		reservoirs: map[string]*reservoir{}, seedName: seedName}
}

func (p *part) clone() *part {
	c := *p
	c.levels = make(map[int]*levelInfo, len(p.levels))
	for k, l := range p.levels {
		l := *l
		c.levels[k] = &l
	}
	c.timeline = p.timeline.clone()
	c.reservoirs = make(map[string]*reservoir, len(p.reservoirs))
	for k, r := range p.reservoirs {
		c.reservoirs[k] = r.clone()
	}
	return &c
}

// gapScratch summarises the gaps of one call before the collector's lock is
// taken: the sketches merged into the group and the timeline, and the exact
// burst statistics.
type gapScratch struct {
	fine, coarse         *sketch.Sketch
	n, burstGaps, bursts uint64
	longest              float64
}

// summarise fills gs from a call's gaps; false when none was measured.
func (gs *gapScratch) summarise(gaps stream.Gaps) bool {
	inBurst := false
	for i := range gaps {
		v, ok := ms(gaps.At(i))
		if !ok {
			continue
		}
		gs.fine.Add(v)
		gs.coarse.Add(v)
		gs.n++
		gs.longest = max(gs.longest, v)
		near := v < nearZeroGapMS
		if near {
			gs.burstGaps++
			if !inBurst {
				gs.bursts++
			}
		}
		inBurst = near
	}
	return gs.n > 0
}

func (gs *gapScratch) reset() {
	gs.fine.Reset()
	gs.coarse.Reset()
	gs.n, gs.burstGaps, gs.bursts, gs.longest = 0, 0, 0, 0
}

// NewCollector returns an empty collector.
func NewCollector(opt Options) *Collector {
	opt = opt.withDefaults()
	c := &Collector{
		opt:     opt,
		groups:  map[groupKey]*Group{},
		whole:   newPart(opt, ""),
		exclude: newExcluder(opt.Exclude),
		pairs:   newPairer(),
	}
	c.scratch.New = func() any {
		return &gapScratch{fine: sketch.New(sketch.FineAlpha), coarse: sketch.New(sketch.CoarseAlpha)}
	}
	return c
}

// Add records one finished call. A nil observation is ignored.
func (c *Collector) Add(o *Observation) {
	if o == nil {
		return
	}
	// A stream can carry thousands of gaps: sketch them before taking the
	// lock, so VUs only contend for a merge of a few hundred buckets.
	var gs *gapScratch
	if o.OK && len(o.Gaps) > 0 {
		pooled := c.scratch.Get().(*gapScratch)
		defer func() {
			pooled.reset()
			c.scratch.Put(pooled)
		}()
		if pooled.summarise(o.Gaps) {
			gs = pooled
		}
	}
	cat := category(o)
	class := levelClass(o)
	isShort, isLong := promptClass(o, c.opt.ShortPromptTokens, c.opt.LongPromptTokens)
	ttft, hasTTFT := ms(o.TTFT)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exclude.leaveOut(o) {
		return
	}

	key := groupKey{Client: o.Name, Category: cat, Model: o.Model, Route: o.Route, Level: class}
	g := c.groups[key]
	if g == nil {
		g = newGroup()
		c.groups[key] = g
	}
	g.add(o, gs)

	in := callFacts{o: o, gs: gs, cat: cat, class: class, ttft: ttft, hasTTFT: hasTTFT, isShort: isShort, isLong: isLong}
	cp := c.clientPart(o.Name)
	c.whole.add(c.opt, &in)
	if cp != nil {
		cp.add(c.opt, &in)
	}
	if o.ItemID != "" && o.OK {
		c.pairs.add(o)
	}
}

// clientPart is the part of o's client, or nil while the run has one client
// (the whole run is then that client's). When a second client appears the
// whole run so far becomes the first one's part. Called before the call is
// added to the whole run.
func (c *Collector) clientPart(name string) *part {
	if c.clients == nil {
		if !c.seenAny || name == c.first {
			c.seenAny, c.first = true, name
			return nil
		}
		fp := c.whole.clone()
		fp.seedName = c.first
		c.clients = map[string]*part{c.first: fp}
	}
	p := c.clients[name]
	if p == nil {
		p = newPart(c.opt, name)
		c.clients[name] = p
	}
	return p
}

// callFacts is what a part needs of one call, computed once.
type callFacts struct {
	o                        *Observation
	gs                       *gapScratch
	cat                      string
	class                    int
	ttft                     float64
	hasTTFT, isShort, isLong bool
}

func (p *part) add(opt Options, in *callFacts) {
	o := in.o
	li := p.levels[in.class]
	if li == nil {
		li = &levelInfo{}
		p.levels[in.class] = li
	}
	li.add(o)

	if p.first.IsZero() || o.Start.Before(p.first) {
		p.first = o.Start
	}
	if o.End.After(p.last) {
		p.last = o.End
	}

	if !o.Start.IsZero() {
		b := p.timeline.at(o.Start)
		if b.Requests == 0 || in.class < b.ClassMin {
			b.ClassMin = in.class
		}
		b.ClassMax = max(b.ClassMax, in.class)
		b.LevelMax = max(b.LevelMax, level(o))
		b.ActiveMax = max(b.ActiveMax, o.Active)
		b.Requests++
		if !o.OK {
			b.Failures++
		} else {
			if in.hasTTFT {
				coarse(&b.TTFT).Add(in.ttft)
				if in.isShort {
					coarse(&b.ShortTTFT).Add(in.ttft)
				}
			}
			if in.gs != nil {
				_ = coarse(&b.Gap).Merge(in.gs.coarse)
			}
			if o.TokensPerSec > 0 {
				coarse(&b.TokensPerSec).Add(o.TokensPerSec)
			}
		}
		// b may move when the timeline grows: no use of it below this line.
		if in.isLong {
			prefillEnd := o.End
			if in.hasTTFT {
				prefillEnd = o.Start.Add(o.TTFT)
			}
			p.timeline.spreadLongPrefill(o.Start, prefillEnd)
		}
	}
	if !o.End.IsZero() {
		e := p.timeline.at(o.End)
		e.Completed++
		e.OutputTokens += o.OutputTokens
	}

	if o.OK {
		r := p.reservoirs[in.cat]
		if r == nil {
			r = newReservoir(opt.ReservoirSize, opt.Seed, p.seedName+in.cat)
			p.reservoirs[in.cat] = r
		}
		r.offer(Sample{TTFT: orMinus(o.TTFT), E2E: orMinus(o.E2E), TPOT: orMinus(o.TPOT), OutputTokens: o.OutputTokens})
	}
}

func orMinus(d time.Duration) float64 {
	if v, ok := ms(d); ok {
		return v
	}
	return -1
}

// Snapshot returns a consistent deep copy of everything collected so far; the
// collector keeps running.
func (c *Collector) Snapshot() *Run {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := &Run{opt: c.opt, groups: make(map[groupKey]*Group, len(c.groups)), Excluded: c.exclude.snapshot(),
		pairs: c.pairs.snapshot()}
	for k, g := range c.groups {
		r.groups[k] = g.clone()
	}
	c.whole.freeze(r)
	if c.clients != nil {
		r.parts = map[string]*Run{}
		for name, p := range c.clients {
			v := &Run{opt: c.opt, groups: map[groupKey]*Group{}, Excluded: c.exclude.clientSnapshot(name), client: name}
			for k, g := range r.groups {
				if k.Client == name {
					v.groups[k] = g
				}
			}
			p.freeze(v)
			r.parts[name] = v
		}
	}
	return r
}

// freeze copies the part into a Run.
func (p *part) freeze(r *Run) {
	r.levels = make(map[int]levelInfo, len(p.levels))
	for k, l := range p.levels {
		r.levels[k] = *l
	}
	r.samples = make(map[string][]Sample, len(p.reservoirs))
	r.seen = make(map[string]uint64, len(p.reservoirs))
	for k, res := range p.reservoirs {
		r.samples[k] = append([]Sample(nil), res.Items...)
		r.seen[k] = res.Seen
	}
	r.First, r.Last, r.Timeline = p.first, p.last, p.timeline.clone()
}

// Run is a frozen copy of a Collector's statistics, what the diagnosis and
// the renderers read.
type Run struct {
	opt         Options
	groups      map[groupKey]*Group
	levels      map[int]levelInfo
	samples     map[string][]Sample
	seen        map[string]uint64
	First, Last time.Time
	Timeline    *Timeline
	// Excluded is what the collector left out (warm-up, scenarios, tags, setup/teardown).
	Excluded runrecord.Exclusions
	// Dispatch is what the test offered and did not send on time (nil when
	// the binding had nothing to say): schedules and k6's dropped iterations.
	Dispatch *runrecord.Dispatch
	// droppedCredits are the schedules' credits never sent, counted as
	// failed calls (SetDispatch); 0 in a client's view of several.
	droppedCredits uint64
	// Capacity is a capacity search's answer (nil without a search).
	Capacity *runrecord.Capacity
	// Retrieval and Images are the sections beside the chat figures
	// (collect_sections.go): the embed and rerank calls, and TTFT by the prompt's
	// images. Nil until the binding sets them.
	Retrieval []*RetrievalGroup
	Images    []*ImageGroup
	// Turns and Jobs are the live conversations' section
	// (collect_conversations.go): TTFT by turn and the jobs' figures.
	Turns []*TurnGroup
	Jobs  []*JobGroup
	// jobLevels are the jobs by the load class of their first call (collect_job_stages.go).
	jobLevels map[int][]*JobGroup
	parts     map[string]*Run // each client alone, when the run had several
	client    string          // the client of this view ("" for a whole run)
	pairs     []runrecord.PairedComparison
}

// SetMinStage changes how long a load level must hold to be a stage (the
// MinStage option) for this frozen run and each client's view of it: the
// stages are found when read, so report() can still choose it.
func (r *Run) SetMinStage(d time.Duration) {
	r.opt.MinStage = d
	for _, v := range r.parts {
		v.opt.MinStage = d
	}
}

// Clients lists the clients (Client name option) seen, sorted.
func (r *Run) Clients() []string { return r.distinct(func(k groupKey) string { return k.Client }) }

// Client is the run as one client saw it: every figure, stage, wave and rule
// of that client alone. With a single client it is the run itself.
func (r *Run) Client(name string) *Run {
	if v := r.parts[name]; v != nil {
		return v
	}
	return r
}

// PerClient says whether the run had several clients, so that every table and
// rule must be read per client.
func (r *Run) PerClient() bool { return len(r.parts) > 1 }

// ClientName is the client of a per-client view ("" for a whole run).
func (r *Run) ClientName() string { return r.client }

// Duration is the wall time from the first call start to the last call end.
func (r *Run) Duration() time.Duration {
	if r.First.IsZero() || r.Last.Before(r.First) {
		return 0
	}
	return r.Last.Sub(r.First)
}

// Categories lists the categories seen, sorted.
func (r *Run) Categories() []string { return r.distinct(func(k groupKey) string { return k.Category }) }

// Models lists the models seen, sorted.
func (r *Run) Models() []string { return r.distinct(func(k groupKey) string { return k.Model }) }

// distinct lists one field of the group keys, sorted, without repeats.
func (r *Run) distinct(field func(groupKey) string) []string {
	set := map[string]bool{}
	for k := range r.groups {
		set[field(k)] = true
	}
	return sortedKeys(set)
}

// Category merges every model and stage of one category; AllCategories
// merges everything. The schedules' dropped credits count as failed calls
// where they belong (droppedIn).
func (r *Run) Category(name string) *Group {
	g := newGroup()
	for k, v := range r.groups {
		if name == runrecord.AllCategories || k.Category == name {
			g.merge(v)
		}
	}
	g.addDropped(r.droppedIn(name))
	return g
}

// Samples returns the reservoir of a category (AllCategories: every category's, concatenated).
func (r *Run) Samples(category string) []Sample {
	if category != runrecord.AllCategories {
		return r.samples[category]
	}
	var all []Sample
	for _, k := range sortedKeys(r.samples) {
		all = append(all, r.samples[k]...)
	}
	return all
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
