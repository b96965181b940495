package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
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

const (
	stageCallSpan = 1               // a stage lasts at least this many typical calls…
	minStageFloor = 3 * time.Second // …and never less than this
)

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
	// stage's load was on (collect_stages.go).
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

// A stage's throughput is what the service delivered while that load was on:
// completions and output tokens per second of wall time. Dividing the stage's
// own calls by the span of their start times is wrong twice over: a stray call
// that ends the test at this VU count (k6 winds VUs down one by one) stretches
// the span by the whole time the test spent at other levels, and the calls
// started last are still running when the span ends. So throughput is read off
// the timeline instead: the seconds in which every call that started belonged
// to the stage, counting what completed in them, after skipping one typical
// call duration at the start of each stretch, while completions still come
// from the previous load level.

// bucketClass is the concurrency class of the calls that started in a bucket,
// or -1 when they started at different levels (a step between stages).
func bucketClass(b *Bucket) int {
	lo, hi := b.ClassMin, b.ClassMax
	if lo != hi {
		return -1
	}
	return hi
}

// measureThroughput sets st.RequestsPerSec and st.OutputTokensPerSec.
func (r *Run) measureThroughput(st *Stage) {
	tl := r.Timeline
	buckets := func(d time.Duration) int { return int(math.Ceil(float64(d) / float64(tl.Width))) }
	skip, maxIdle := 1, 1
	if e2e := st.All.S(record.DistE2E); e2e.Count() > 0 {
		skip = max(1, buckets(time.Duration(q50(e2e)*float64(time.Millisecond))))
		// Seconds without a start are part of the stretch while a call may still
		// be running or the next one be thinking; beyond that the stage was over.
		pace := 3 * st.Steady / time.Duration(max(1, st.Calls)) // #nosec G115 -- a call count, far below 2^63
		maxIdle = 1 + buckets(max(time.Duration(e2e.Quantile(0.99)*float64(time.Millisecond)), pace))
	}
	var seconds float64
	var completed uint64
	var tokens int64
	for i := 0; i < len(tl.Buckets); {
		if b := &tl.Buckets[i]; b.Requests == 0 || bucketClass(b) != st.Class {
			i++
			continue
		}
		// A stretch runs to the last bucket where calls of this stage started;
		// a few seconds without any start (long calls) do not end it.
		first, last, j := i, i, i+1
		for ; j < len(tl.Buckets) && j-last <= maxIdle; j++ {
			b := &tl.Buckets[j]
			if b.Requests == 0 {
				continue
			}
			if bucketClass(b) != st.Class {
				break
			}
			last = j
		}
		for k := first + skip; k <= last; k++ {
			seconds += tl.Width.Seconds()
			completed += tl.Buckets[k].Completed
			tokens += tl.Buckets[k].OutputTokens
		}
		i = j
	}
	if seconds == 0 {
		// Stretches shorter than one call: the start span is all there is.
		seconds = st.Steady.Seconds()
		completed, tokens = st.All.Requests, st.All.OutputTokens
	}
	st.RequestsPerSec = float64(completed) / seconds
	st.OutputTokensPerSec = float64(tokens) / seconds
}
