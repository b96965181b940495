package capacity

import (
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
)

// claim is one call the search's load started: when it was due (open
// model) or took its slot (closed model), and its figures once it ended.
type claim struct {
	at   time.Time
	done *finished // nil while in flight
}

// finished is what a window keeps of an ended call.
type finished struct {
	end        time.Time
	client     string
	ok         bool
	ttft, tpot measure.Duration
	e2e        measure.Duration
	outTokens  int64
}

// window is one window of the search while it runs.
type window struct {
	index   int
	phase   string
	level   float64
	start   time.Time
	warmEnd time.Time
	// end is the end of the measured span: every call sent from warmEnd to
	// end is judged. It is moved on by a lengthening; the load goes on at the
	// window's level past it until the window is judged (its tail).
	end time.Time
	// cap is the latest end a lengthening may reach.
	cap time.Time
	// nextCheck is the next over-saturation check on the grid; nextJudge the
	// next time the window is judged (its end, then every tailEvery while its
	// calls finish).
	nextCheck, nextJudge time.Time
	// satSince is the first of the checks in a row that found it
	// over-saturated (zero: the last check did not).
	satSince time.Time
	// extensions counts its lengthenings.
	extensions int
	// leansPass says that at its last judging some objectives were
	// undecided and each one's calls leaned to a pass (bound.leansPass).
	leansPass bool

	claims   []*claim // in the order of their times (insert)
	ttftPts  []point  // x: due/claim time, y: TTFT ms
	queuePts []point  // x: claim time, y: calls in flight
	latePts  []point  // x: claim time, y: the credit's lateness, ms
	waitPts  []point  // x: read time, y: the server's waiting count
	longest  time.Duration
}

func (w *window) x(t time.Time) float64 { return t.Sub(w.start).Seconds() }

// insert adds a claim in the order of the claims' times. VUs tell the
// search of the credits they took in the order they ran, which two credits
// due microseconds apart (bursty arrivals' gaps often are) can swap; attach
// and calls read the claims in time order.
func (w *window) insert(c *claim) {
	i := sort.Search(len(w.claims), func(i int) bool { return w.claims[i].at.After(c.at) })
	w.claims = slices.Insert(w.claims, i, c)
}

// attach matches an ended call to its claim: the latest claim at or before
// key that is still in flight; exact: at key itself (a credit's due time).
func (w *window) attach(key time.Time, f *finished, exact bool) bool {
	i := sort.Search(len(w.claims), func(i int) bool { return w.claims[i].at.After(key) })
	for i--; i >= 0; i-- {
		c := w.claims[i]
		if exact && !c.at.Equal(key) {
			return false
		}
		if c.done == nil {
			c.done = f
			if c.at.After(w.warmEnd) || c.at.Equal(w.warmEnd) {
				w.longest = max(w.longest, f.end.Sub(c.at))
			}
			if ttft, ok := f.ttft.MS(); ok {
				w.ttftPts = append(w.ttftPts, point{w.x(c.at), ttft, w.x(f.end)})
			}
			return true
		}
	}
	return false
}

// finishedOf is the search's view of a call's record: TTFT and E2E counted
// from the due time when a schedule sent the call (what a user arriving on
// time waited, the generator's lateness included), from the send otherwise.
func finishedOf(c *record.Call) (key time.Time, f *finished) {
	key = c.Start
	shift := time.Duration(0)
	if !c.Due.IsZero() {
		key = c.Due
		shift = max(c.Start.Sub(c.Due), 0)
	}
	f = &finished{end: c.End, client: c.Name, ok: c.OK, ttft: c.TTFT.Plus(shift), tpot: c.TPOT, e2e: c.E2E.Plus(shift),
		outTokens: c.OutputTokens}
	return key, f
}

// measured is the window's measured span: from the end of the warm-up to
// its end. Nothing is cut from its end: the calls sent last are judged like
// the others, once they finish or, still running, as censored calls. (A
// cut there would keep only the calls that finished in time, the fast ones,
// and under a queue still building the last calls sent are the slowest.)
// The warm-up is left out because it is a transient of the level change:
// the queue of the previous level drains or fills there, so its calls
// describe neither level; where the search holds a level (a sustain window
// after a pass at the same level), the warm-up costs calls, not accuracy.
func (w *window) measured() (from, until time.Time) {
	return w.warmEnd, w.end
}

// judgedCall is a measured call as the verdict sees it at time t.
type judgedCall struct {
	at  time.Time
	f   *finished     // nil: still in flight at t
	age time.Duration // t − its due or claim time, for a call in flight
}

// calls lists the measured calls at judging time t, in the order they were
// sent, and how many of them are still in flight.
func (w *window) calls(t time.Time) (out []judgedCall, inflight int) {
	from, until := w.measured()
	for _, c := range w.claims {
		if c.at.Before(from) || !c.at.Before(until) {
			continue
		}
		if c.done != nil && !c.done.end.After(t) {
			out = append(out, judgedCall{at: c.at, f: c.done})
			continue
		}
		inflight++
		out = append(out, judgedCall{at: c.at, age: t.Sub(c.at)})
	}
	return out, inflight
}

// saturated says whether the window shows a queue growing at time t, and
// why (open model: TTFT rising with calls in flight, credits' lateness or
// the server's waiting count). With a TTFT objective, TTFT must also have
// risen to twice its limit (limit ms; 0: none): under random arrivals a
// burst raises TTFT and the calls in flight for seconds at a level below
// the capacity, a rise the slope test cannot tell from a queue growing for
// good (the points of one burst are not independent). Near the limit the
// interval verdict judges; far past it a window is stopped without waiting.
func (w *window) saturated(t time.Time, open bool, limit float64) (bool, string) {
	from, until := w.x(w.warmEnd), w.x(t)
	ttft := fit(w.ttftPts, from, until)
	if !ttft.rising(0.5, 0) || (limit > 0 && ttft.base+ttft.rise <= 2*limit) {
		return false, ""
	}
	// Every sign that shows the queue is named, not only the first: which of
	// them crosses its test first at a check is a race (a busy machine's
	// late scrape, a burst of calls), and the reason says what was seen.
	var signs []string
	if open && fit(w.queuePts, from, until).rising(0.5, 2) {
		signs = append(signs, "calls in flight")
	}
	if fit(w.waitPts, from, until).rising(0.5, 2) {
		signs = append(signs, "the server's waiting count")
	}
	late := open && fit(w.latePts, from, until).rising(0, 50)
	if n := len(signs); n > 0 {
		why := "over-saturated: " + strings.Join(append([]string{"TTFT"}, signs[:n-1]...), ", ") + " and " + signs[n-1] + " rising"
		if late {
			why += ", credits sent ever later"
		}
		return true, why
	}
	if late {
		return true, "over-saturated: TTFT rising and credits sent ever later"
	}
	return false, ""
}

// unsettled says whether a figure is still trending at the window's end
// in a way that matters to its verdict: TTFT rising significantly and, one
// more window on, past limit (the tightest TTFT objective; without one, up
// by a quarter), or calls in flight still climbing (open model).
func (w *window) unsettled(t time.Time, open bool, limit float64) (bool, string) {
	from, until := w.x(w.warmEnd), w.x(t)
	tr := fit(w.ttftPts, from, until)
	ahead := tr.base + tr.slope*(until-from+w.length().Seconds())
	if tr.rising(0.25, 0) && (limit == 0 || ahead > limit) {
		return true, "not settled: TTFT still rising at the window's end"
	}
	if open && fit(w.queuePts, from, until).rising(0.25, 2) {
		return true, "not settled: calls in flight still rising at the window's end"
	}
	return false, ""
}

// length is the window's planned length.
func (w *window) length() time.Duration { return w.end.Sub(w.start) }

// finite is false for NaN and infinities.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
