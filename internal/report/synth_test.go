package report

import (
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// synth generates the observations of a closed-loop k6 run against a model
// whose behaviour the test chooses: each VU calls back to back; the knobs
// reproduce one cause each, on top of log-normal noise.
type synth struct {
	seed   uint64
	stages []synthStage
	cats   []synthCat
	noise  float64 // σ of the log-normal noise on every time

	queueMS      func(vus int) float64 // extra TTFT from waiting at this load
	tpsAt        func(vus int) float64 // decode speed at this load (default 50 tok/s)
	gateway      bool                  // tokens delivered in blocks of 10
	connectMS    float64               // every call opens a connection costing this
	headersMS    float64               // response headers arrive this long after t0 (≤ TTFT)
	parseShare   float64               // client parse time as a share of E2E
	eventLagMS   float64               // JS callback lag
	starvedProb  float64               // share of calls whose idle timer fired far too late
	clientLagMS  float64               // the load generator's own lag
	lateFirst    float64               // share of calls whose first token was read with the next (a zero first gap)
	sharedPrefix bool
	hitRate      float64
	holMS        float64 // extra short-prompt TTFT per long prefill in flight
	stallProb    float64
	driftPerMin  float64 // TTFT multiplier growth per minute (0.5 = +50 %/min)
}

type synthStage struct {
	VUs     int
	Seconds int
}

type synthCat struct {
	Name             string
	Weight           int
	PromptTokens     int64
	OutMin, OutMax   int64
	TTFTMS           float64
	LongPromptPrefil bool
}

type span struct{ from, to time.Time }

var t0 = time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC) //nolint:gochecknoglobals // test epoch

func defaultCats() []synthCat {
	return []synthCat{
		{Name: "short", Weight: 3, PromptTokens: 40, OutMin: 60, OutMax: 60, TTFTMS: 150},
		{Name: "medium", Weight: 4, PromptTokens: 300, OutMin: 60, OutMax: 60, TTFTMS: 250},
		{Name: "long_context", Weight: 1, PromptTokens: 4000, OutMin: 60, OutMax: 60, TTFTMS: 900},
	}
}

func (s synth) observations() []*Observation {
	rng := rand.New(rand.NewPCG(s.seed, 99))
	if s.cats == nil {
		s.cats = defaultCats()
	}
	if s.noise == 0 {
		s.noise = 0.2
	}
	ln := func() float64 { return math.Exp(rng.NormFloat64() * s.noise) }
	var out []*Observation
	stageStart := t0
	for _, st := range s.stages {
		stageEnd := stageStart.Add(time.Duration(st.Seconds) * time.Second)
		// VUs get categories by weight; long-prompt VUs run first so their
		// prefill intervals are known when short calls need them.
		var vuCats []synthCat
		total := 0
		for _, c := range s.cats {
			total += c.Weight
		}
		for v := range st.VUs {
			k := v % total
			for _, c := range s.cats {
				if k < c.Weight {
					vuCats = append(vuCats, c)
					break
				}
				k -= c.Weight
			}
		}
		sort.SliceStable(vuCats, func(i, j int) bool { return vuCats[i].PromptTokens > vuCats[j].PromptTokens })
		var prefills []span
		for _, cat := range vuCats {
			t := stageStart.Add(time.Duration(rng.Float64() * float64(time.Second)))
			for t.Before(stageEnd) {
				o := s.call(rng, ln, cat, st.VUs, t, prefills)
				if cat.PromptTokens >= 2000 {
					prefills = append(prefills, span{t, t.Add(o.TTFT.Or(0))})
				}
				out = append(out, o)
				t = o.End.Add(time.Duration(rng.Float64() * float64(50*time.Millisecond)))
			}
		}
		stageStart = stageEnd
	}
	sort.Slice(out, func(i, j int) bool { return out[i].End.Before(out[j].End) })
	return out
}

func (s synth) call(rng *rand.Rand, ln func() float64, cat synthCat, vus int, start time.Time, prefills []span) *Observation {
	ttft := cat.TTFTMS * ln()
	if s.queueMS != nil {
		ttft += s.queueMS(vus) * ln()
	}
	if s.driftPerMin != 0 {
		ttft *= 1 + s.driftPerMin*start.Sub(t0).Minutes()
	}
	if s.holMS > 0 && cat.PromptTokens < 500 {
		for _, p := range prefills {
			if !start.Before(p.from) && start.Before(p.to) {
				ttft += s.holMS
			}
		}
	}
	ttft += s.connectMS
	tps := 50.0
	if s.tpsAt != nil {
		tps = s.tpsAt(vus)
	}
	tps *= ln()
	n := cat.OutMin
	if cat.OutMax > cat.OutMin {
		n += rng.Int64N(cat.OutMax - cat.OutMin + 1)
	}
	tpot := 1000 / tps
	gaps := make([]time.Duration, 0, n-1)
	stalls := 0
	for i := int64(1); i < n; i++ {
		g := tpot * math.Exp(rng.NormFloat64()*0.1)
		if s.gateway {
			if i%10 == 0 {
				g = tpot * 10 * math.Exp(rng.NormFloat64()*0.05)
			} else {
				g = 0.02
			}
		}
		if s.stallProb > 0 && i == n/2 && rng.Float64() < s.stallProb {
			g = 900
			stalls++
		}
		gaps = append(gaps, time.Duration(g*float64(time.Millisecond)))
	}
	// What the call would judge of its TTFT (stream.TTFTCheck): a
	// gateway's bursts leave it unjudged.
	firstRead := stream.TTFTOnTime
	if s.lateFirst > 0 && len(gaps) > 0 && rng.Float64() < s.lateFirst {
		gaps[0], firstRead = 0, stream.TTFTReadLate
	}
	if s.gateway || len(gaps) < 3 {
		firstRead = stream.TTFTUnjudged
	}
	var decode time.Duration
	for _, g := range gaps {
		decode += g
	}
	ttftD := time.Duration(ttft * float64(time.Millisecond))
	e2e := ttftD + decode
	o := &Observation{
		Result: &stream.Result{
			Start: start, End: start.Add(e2e), OK: true, TTFT: measure.Of(ttftD), TTFTAnswer: measure.Of(ttftD), E2E: measure.Of(e2e),
			TTFB: measure.Of(time.Duration((s.connectMS + 2) * float64(time.Millisecond))), Connect: 0,
			TPOT: measure.Of(decode / time.Duration(max(1, n-1))), TokensPerSec: float64(n-1) / decode.Seconds(),
			Gaps: stream.GapsOf(gaps...), TTFTCheck: firstRead, OutputTokens: n, Cache: stream.CacheUnknown,
			Stalls: stalls, ClientParse: time.Duration(0.003 * float64(e2e)),
			Usage: &protocol.Usage{PromptTokens: cat.PromptTokens},
		},
		Origin:   record.Origin{Category: cat.Name, Model: "sim-large", Scenario: "default", SharedPrefix: s.sharedPrefix},
		Active:   vus,
		VUs:      vus,
		EventLag: 0,
		// ClientLag stays unknown unless clientLagMS says (a measured 0 is a lag of 0).
	}
	if s.headersMS > 0 {
		o.TTFB = measure.Of(time.Duration(min(s.headersMS*ln(), 0.85*ttft) * float64(time.Millisecond)))
	}
	if s.connectMS > 0 {
		o.Connect = time.Duration(s.connectMS * float64(time.Millisecond))
	}
	if s.parseShare > 0 {
		o.ClientParse = time.Duration(s.parseShare * float64(e2e))
	}
	if s.eventLagMS > 0 {
		o.EventLag = time.Duration(s.eventLagMS * ln() * float64(time.Millisecond))
	}
	if s.clientLagMS > 0 {
		o.ClientLag = measure.Of(time.Duration(s.clientLagMS * ln() * float64(time.Millisecond)))
	}
	if s.starvedProb > 0 && rng.Float64() < s.starvedProb {
		o.Starved = 1
	}
	if s.sharedPrefix || s.hitRate > 0 {
		o.Cache = stream.CacheMiss
		if rng.Float64() < s.hitRate {
			o.Cache = stream.CacheHit
			o.Usage.CachedTokens = o.Usage.PromptTokens / 2
		}
	}
	return o
}

// collect feeds the run to a collector and returns its snapshot.
func (s synth) collect() *Run {
	c := NewCollector(Options{Start: t0})
	for _, o := range s.observations() {
		c.Add(o)
	}
	return c.Snapshot()
}
