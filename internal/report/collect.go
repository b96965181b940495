package report

import (
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// Collector aggregates observations from every VU of a process. It is safe
// for concurrent use; its memory depends on the number of clients,
// categories, models and concurrency classes, never on the length of the test.
type Collector struct {
	opt Options

	mu      sync.Mutex
	exclude *excluder
	groups  map[groupKey]*Group
	// last is the group the last call went to: a test's calls mostly go
	// to one (a client, category, model, route and level), and finding it
	// in groups hashed the bytes of four strings per call, out of the CPU's
	// caches in a loaded k6; the key's strings are mostly the very ones of
	// the last call, which compare by their pointers alone.
	last struct {
		key   groupKey
		group *Group
	}
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
	// lock, so VUs only contend for a merge of a few hundred buckets. A
	// short answer's few are kept as values, on the stack (gapScratch).
	var gs *gapScratch
	var few gapScratch // a short answer's: no sketch of its own (gapScratch)
	switch {
	case len(o.Gaps) == 0 || !rowGap.Takes(o.OK):
	case len(o.Gaps) <= fewGaps:
		if few.summarise(o.Gaps) {
			gs = &few
		}
	default:
		pooled := c.scratch.Get().(*gapScratch) //nolint:forcetypeassert // the pool holds nothing else
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
	ttft, hasTTFT := rowTTFT.Kept(o)

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exclude.leaveOut(o) {
		return
	}

	g := c.group(groupKey{Client: o.Name, Category: cat, Model: o.Origin.Model, Route: o.Route, Level: class})
	g.add(o, gs)

	in := callFacts{o: o, cat: cat, class: class, ttft: ttft, hasTTFT: hasTTFT, isShort: isShort, isLong: isLong}
	cp := c.clientPart(o.Name)
	c.whole.add(c.opt, &in, gs)
	if cp != nil {
		cp.add(c.opt, &in, gs)
	}
	if o.ItemID != "" && o.OK {
		c.pairs.add(o)
	}
}

// group is key's group, made for its first call; under c.mu.
func (c *Collector) group(key groupKey) *Group {
	if c.last.group != nil && c.last.key == key {
		return c.last.group
	}
	g := c.groups[key]
	if g == nil {
		g = newGroup()
		c.groups[key] = g
	}
	c.last.key, c.last.group = key, g
	return g
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

// callFacts is what a part needs of one call, computed once (with its gaps'
// summary, apart: a short answer's is on the stack, and would not stay there
// beside the category, which a part may keep).
type callFacts struct {
	o                        *Observation
	cat                      string
	class                    int
	ttft                     float64
	hasTTFT, isShort, isLong bool
}

func (p *part) add(opt Options, in *callFacts, gs *gapScratch) {
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
		}
		// Each figure over time counts the calls its row counts (a failed
		// call's TTFT and gaps, no tokens/s).
		if in.hasTTFT {
			coarse(&b.TTFT).Add(in.ttft)
			if in.isShort {
				coarse(&b.ShortTTFT).Add(in.ttft)
			}
		}
		if gs != nil {
			gs.mergeInto(coarse(&b.Gap), gs.coarse)
			left := max(o.GapsUnsampled, 0)
			if cutByStop(o) {
				left = len(o.Gaps) // a call the stop cut sent k6 no sample
			}
			b.GapsUnsampled += uint64(left)
		}
		if tps, ok := rowTokensPerSec.Kept(o); ok {
			coarse(&b.TokensPerSec).Add(tps)
		}
		// b may move when the timeline grows: no use of it below this line.
		if in.isLong {
			prefillEnd := o.End
			if in.hasTTFT {
				prefillEnd = o.Start.Add(o.TTFT.Or(0))
			}
			p.timeline.spreadLongPrefill(o.Start, prefillEnd)
		}
	}
	if !o.End.IsZero() {
		e := p.timeline.at(o.End)
		e.Completed++
		e.OutputTokens += o.OutputTokens
	}

	if s, ok := sampleOf(o); ok {
		r := p.reservoirs[in.cat]
		if r == nil {
			r = newReservoir(opt.ReservoirSize, opt.Seed, p.seedName+in.cat)
			p.reservoirs[in.cat] = r
		}
		r.offer(s)
	}
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
