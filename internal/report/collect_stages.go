package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// A load stage is a window of steady concurrency. Calls are keyed by the
// concurrency class they started in, not by time, so that a step load, a
// scenario sequence and a wave that revisits a level all land on the same
// points of a "latency against concurrency" curve. A class only counts as a
// stage when calls kept starting in it for long enough compared with how long
// one call takes without queueing (the quickest level's mean call): the server
// settles into a new load within a call or two, so a plateau of 5–8 s is a
// stage for calls of one second, even when the calls of an overloaded level
// queue for longer than the plateau lasts.
// A ramp passes through each class in about one second and is left out.

// concurrencyClass maps a VU count to its class: exact up to 20, then a 5 %
// logarithmic grid, so a ramp to 10 000 VUs makes at most ~130 classes.
func concurrencyClass(v int) int {
	if v <= 20 {
		return max(v, 0)
	}
	return 20 + int(math.Round(math.Log(float64(v)/20)/math.Log(1.05)))
}

// rateClassBase keeps the classes of arrival rates apart from VU counts.
const rateClassBase = 1 << 20

// rateClass maps an arrival rate to its class: a 5 % logarithmic grid.
func rateClass(r float64) int {
	return rateClassBase + int(math.Round(math.Log(r)/math.Log(1.05)))
}

// isRateClass says whether a class is one of arrival rates.
func isRateClass(c int) bool { return c >= rateClassBase/2 }

// levelInfo tracks how long and at which concurrency a class was used.
type levelInfo struct {
	Calls       uint64
	VUsSum      float64
	ActiveSum   float64
	E2ESumMS    float64 // over calls with an E2E, for the typical call duration
	E2ECalls    uint64
	First, Last time.Time
	// Steady time: spans of call starts no more than spanGap() apart, summed.
	spanStart, lastStart time.Time
	closedDur            time.Duration
}

// Two visits of one class (a wave coming back to it) are told apart by a
// pause in its call starts longer than a few calls.
const (
	minSpanGap    = 2 * time.Second
	spanGapCalls  = 3
	stageCallSpan = 1               // a stage lasts at least this many typical calls…
	minStageFloor = 3 * time.Second // …and never less than this
)

// spanGap is how long starts may pause within one visit of the class.
func (l *levelInfo) spanGap() time.Duration {
	return max(minSpanGap, spanGapCalls*l.meanCall())
}

// meanCall is the mean E2E of the class's calls (0 before any).
func (l *levelInfo) meanCall() time.Duration {
	if l.E2ECalls == 0 {
		return 0
	}
	return time.Duration(l.E2ESumMS / float64(l.E2ECalls) * float64(time.Millisecond))
}

// steady is the time during which calls kept starting in this class.
func (l *levelInfo) steady() time.Duration { return l.closedDur + l.lastStart.Sub(l.spanStart) }

func (l *levelInfo) add(o *Observation) {
	l.Calls++
	l.VUsSum += level(o)
	l.ActiveSum += float64(o.Active)
	if v, ok := ms(o.E2E); ok && o.OK {
		l.E2ESumMS += v
		l.E2ECalls++
	}
	t := o.Start
	switch {
	case l.Calls == 1:
		l.spanStart, l.lastStart = t, t
	case t.After(l.lastStart):
		if t.Sub(l.lastStart) > l.spanGap() {
			l.closedDur += l.lastStart.Sub(l.spanStart)
			l.spanStart = t
		}
		l.lastStart = t
	case t.Before(l.spanStart) && l.spanStart.Sub(t) <= l.spanGap():
		l.spanStart = t // calls end out of order: an earlier start may arrive late
	}
	if l.First.IsZero() || o.Start.Before(l.First) {
		l.First = o.Start
	}
	if o.Start.After(l.Last) {
		l.Last = o.Start
	}
}

// Stage is a concurrency class with enough steady time to be compared with others.
type Stage struct {
	Class       int     // key of the class (internal)
	Concurrency float64 // mean VUs (or streams in flight, or arrival rate when ByRate) at call start
	ByRate      bool    // the level is an arrival rate (iterations/s), not a VU count
	Active      float64 // mean streams in flight in this process at call start
	Calls       uint64
	Steady      time.Duration // time during which calls kept starting in this stage
	First, Last time.Time     // first and last call start
	All         *Group        // every category and model merged
	ByCategory  map[string]*Group
	// Throughput is completed calls (and output tokens) per second while the
	// stage's load was on (collect_stage_throughput.go).
	RequestsPerSec, OutputTokensPerSec float64
}

// minStage is the steady time a class needs to be a stage: the MinStage
// option when set, else stageCallSpan calls of the quickest level and at
// least minStageFloor.
func (r *Run) minStage() time.Duration {
	if r.opt.MinStage > 0 {
		return r.opt.MinStage
	}
	return max(minStageFloor, stageCallSpan*r.serviceCall())
}

// serviceCall is the shortest mean call of the levels with calls enough to
// judge: how long a call takes when it does not queue (an overloaded level's
// calls grow with its queue, however long it is held).
func (r *Run) serviceCall() time.Duration {
	var best time.Duration
	for _, l := range r.levels {
		if m := l.meanCall(); l.E2ECalls >= stageMinCalls && m > 0 && (best == 0 || m < best) {
			best = m
		}
	}
	return best
}

// qualifies says whether class l was held long enough, with calls enough, to be a stage.
func (r *Run) qualifies(l *levelInfo) bool {
	return l.Calls >= stageMinCalls && l.steady() >= r.minStage()
}

// Stages returns the steady stages, lowest concurrency first.
func (r *Run) Stages() []*Stage {
	var out []*Stage
	for class, li := range r.levels {
		if !r.qualifies(&li) {
			continue
		}
		st := &Stage{
			Class: class, Calls: li.Calls, Steady: li.steady(), First: li.First, Last: li.Last, ByRate: isRateClass(class),
			Concurrency: li.VUsSum / float64(li.Calls), Active: li.ActiveSum / float64(li.Calls),
			All: newGroup(), ByCategory: map[string]*Group{},
		}
		for k, g := range r.groups {
			if k.Level != class {
				continue
			}
			st.All.merge(g)
			cg := st.ByCategory[k.Category]
			if cg == nil {
				cg = newGroup()
				st.ByCategory[k.Category] = cg
			}
			cg.merge(g)
		}
		r.measureThroughput(st)
		out = append(out, st)
	}
	out = oneUnit(out)
	sort.Slice(out, func(i, j int) bool { return out[i].Concurrency < out[j].Concurrency })
	return out
}

// oneUnit keeps the stages of one kind when a run had both VU levels and
// arrival rates (a warm-up of a few VUs before an arrival-rate step load): a
// curve of latency against load cannot put 3 VUs and 20 requests/s on one
// axis. The kind with more stages is the curve (more calls on a tie).
func oneUnit(stages []*Stage) []*Stage {
	var byRate, byVUs []*Stage
	var rateCalls, vuCalls uint64
	for _, st := range stages {
		if st.ByRate {
			byRate, rateCalls = append(byRate, st), rateCalls+st.Calls
		} else {
			byVUs, vuCalls = append(byVUs, st), vuCalls+st.Calls
		}
	}
	if len(byRate) > len(byVUs) || (len(byRate) == len(byVUs) && rateCalls >= vuCalls) {
		return byRate
	}
	return byVUs
}

// levelShare is the share of calls a concurrency level must hold for the load
// to count as having had that level (a ramp's passing classes do not).
const levelShare = 0.05

// StageNote explains, when the load had several levels of concurrency but
// fewer than two of them qualified as stages, why none could be compared:
// the report says so instead of staying silent. "" otherwise.
func (r *Run) StageNote() string {
	var total uint64
	for _, l := range r.levels {
		total += l.Calls
	}
	type level struct {
		class int
		l     levelInfo
	}
	var seen []level
	qualified := 0
	for class, l := range r.levels {
		if r.qualifies(&l) {
			qualified++
		}
		if float64(l.Calls) >= levelShare*float64(total) && l.Calls > 1 {
			seen = append(seen, level{class, l})
		}
	}
	if len(seen) < 2 || qualified >= 2 {
		return ""
	}
	sort.Slice(seen, func(i, j int) bool { return seen[i].class < seen[j].class })
	var names []string
	longest := seen[0]
	for _, s := range seen {
		names = append(names, runrecord.FormatConc(runrecord.RoundLevel(s.l.VUsSum/float64(s.l.Calls))))
		if s.l.steady() > longest.l.steady() {
			longest = s
		}
	}
	need := fmt.Sprintf("%s of steady starts (minStage)", fmtDur(r.minStage()))
	if r.opt.MinStage == 0 {
		need = fmt.Sprintf("%s of steady starts (as long as a call of the quickest level, %s, and at least %s; minStage sets it)",
			fmtDur(r.minStage()), fmtDur(r.serviceCall()), fmtDur(minStageFloor))
	}
	unit := runrecord.LevelUnit(isRateClass(longest.class))
	return fmt.Sprintf("no load stages to compare: the load had %d levels (%s %s) but %s held long enough; "+
		"the longest, %s %s, kept calls starting for %s over %d calls, and a stage needs %s and %d calls. "+
		"Hold each level longer to get the latency-against-load curve.",
		len(seen), strings.Join(names, ", "), unit, map[bool]string{true: "only one", false: "none"}[qualified == 1],
		runrecord.FormatConc(runrecord.RoundLevel(longest.l.VUsSum/float64(longest.l.Calls))), unit, fmtDur(longest.l.steady()), longest.l.Calls,
		need, stageMinCalls)
}

// fmtDur prints a duration cut for reading (1.2s, 350ms): never more than it was.
func fmtDur(d time.Duration) string {
	if d >= time.Second {
		return d.Truncate(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// Unit names what the stage's level counts ("VUs" or "req/s").
func (st *Stage) Unit() string { return runrecord.LevelUnit(st.ByRate) }
