package report

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
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
	// median call durations and at least minStageFloor (stages.go).
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
	Category, Model string
	Level           int
}

// Collector aggregates observations from every VU of a process. It is safe
// for concurrent use; its memory depends on the number of categories, models
// and concurrency classes, never on the length of the test.
type Collector struct {
	opt Options

	mu         sync.Mutex
	exclude    *excluder
	groups     map[groupKey]*Group
	levels     map[int]*levelInfo
	timeline   *Timeline
	reservoirs map[string]*reservoir
	first      time.Time // earliest call start
	last       time.Time // latest call end

	scratch sync.Pool // *gapScratch
}

// gapScratch summarises the gaps of one call before the collector's lock is
// taken: the sketches merged into the group and the timeline, and the exact
// burst statistics.
type gapScratch struct {
	fine, coarse         *Sketch
	n, burstGaps, bursts uint64
	longest              float64
}

// summarise fills gs from a call's gaps; false when none was measured.
func (gs *gapScratch) summarise(gaps []time.Duration) bool {
	inBurst := false
	for _, d := range gaps {
		v, ok := ms(d)
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
	gs.fine.reset()
	gs.coarse.reset()
	gs.n, gs.burstGaps, gs.bursts, gs.longest = 0, 0, 0, 0
}

// NewCollector returns an empty collector.
func NewCollector(opt Options) *Collector {
	opt = opt.withDefaults()
	c := &Collector{
		opt:        opt,
		groups:     map[groupKey]*Group{},
		levels:     map[int]*levelInfo{},
		timeline:   newTimeline(opt.Start, opt.MaxBuckets),
		reservoirs: map[string]*reservoir{},
		exclude:    newExcluder(opt.Exclude),
	}
	c.scratch.New = func() any {
		return &gapScratch{fine: NewSketch(FineAlpha), coarse: NewSketch(CoarseAlpha)}
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
	cat := o.category()
	class := concurrencyClass(o.concurrency())
	isShort, isLong := o.promptClass(c.opt.ShortPromptTokens, c.opt.LongPromptTokens)
	ttft, hasTTFT := ms(o.TTFT)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exclude.leaveOut(o) {
		return
	}

	key := groupKey{Category: cat, Model: o.Model, Level: class}
	g := c.groups[key]
	if g == nil {
		g = newGroup()
		c.groups[key] = g
	}
	g.add(o, gs)

	li := c.levels[class]
	if li == nil {
		li = &levelInfo{}
		c.levels[class] = li
	}
	li.add(o)

	if c.first.IsZero() || o.Start.Before(c.first) {
		c.first = o.Start
	}
	if o.End.After(c.last) {
		c.last = o.End
	}

	if !o.Start.IsZero() {
		b := c.timeline.at(o.Start)
		if b.Requests == 0 || o.concurrency() < b.VUsMin {
			b.VUsMin = o.concurrency()
		}
		b.VUsMax = max(b.VUsMax, o.concurrency())
		b.ActiveMax = max(b.ActiveMax, o.Active)
		b.Requests++
		if !o.OK {
			b.Failures++
		} else {
			if hasTTFT {
				coarse(&b.TTFT).Add(ttft)
				if isShort {
					coarse(&b.ShortTTFT).Add(ttft)
				}
			}
			if gs != nil {
				_ = coarse(&b.Gap).Merge(gs.coarse)
			}
			if o.TokensPerSec > 0 {
				coarse(&b.TokensPerSec).Add(o.TokensPerSec)
			}
		}
		// b may move when the timeline grows: no use of it below this line.
		if isLong {
			prefillEnd := o.End
			if hasTTFT {
				prefillEnd = o.Start.Add(o.TTFT)
			}
			c.timeline.spreadLongPrefill(o.Start, prefillEnd)
		}
	}
	if !o.End.IsZero() {
		e := c.timeline.at(o.End)
		e.Completed++
		e.OutputTokens += o.OutputTokens
	}

	if o.OK {
		r := c.reservoirs[cat]
		if r == nil {
			r = newReservoir(c.opt.ReservoirSize, c.opt.Seed, cat)
			c.reservoirs[cat] = r
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
	r := &Run{
		opt:     c.opt,
		groups:  make(map[groupKey]*Group, len(c.groups)),
		levels:  make(map[int]levelInfo, len(c.levels)),
		samples: make(map[string][]Sample, len(c.reservoirs)),
		seen:    make(map[string]uint64, len(c.reservoirs)),
		First:   c.first, Last: c.last,
		Timeline: c.timeline.clone(),
		Excluded: c.exclude.snapshot(),
	}
	for k, g := range c.groups {
		r.groups[k] = g.clone()
	}
	for k, l := range c.levels {
		r.levels[k] = *l
	}
	for k, res := range c.reservoirs {
		r.samples[k] = append([]Sample(nil), res.Items...)
		r.seen[k] = res.Seen
	}
	return r
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
	Excluded Exclusions
}

// Duration is the wall time from the first call start to the last call end.
func (r *Run) Duration() time.Duration {
	if r.First.IsZero() || r.Last.Before(r.First) {
		return 0
	}
	return r.Last.Sub(r.First)
}

// Categories lists the categories seen, sorted.
func (r *Run) Categories() []string {
	set := map[string]bool{}
	for k := range r.groups {
		set[k.Category] = true
	}
	return sortedKeys(set)
}

// Models lists the models seen, sorted.
func (r *Run) Models() []string {
	set := map[string]bool{}
	for k := range r.groups {
		set[k.Model] = true
	}
	return sortedKeys(set)
}

// Category merges every model and stage of one category; AllCategories merges everything.
func (r *Run) Category(name string) *Group {
	g := newGroup()
	for k, v := range r.groups {
		if name == AllCategories || k.Category == name {
			g.merge(v)
		}
	}
	return g
}

// Samples returns the reservoir of a category (AllCategories: every category's, concatenated).
func (r *Run) Samples(category string) []Sample {
	if category != AllCategories {
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
