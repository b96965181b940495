package capacity

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// Search is one capacity search as it runs. It is safe for concurrent use:
// every VU claims and finishes calls, and a ticker advances it.
type Search struct {
	cfg Config
	// ttftLimit is the tightest TTFT objective's limit, ms (0: none).
	ttftLimit float64

	mu       sync.Mutex
	started  bool
	origin   time.Time
	cur      *window
	wins     []*window // every window opened, to match late calls to their claims
	rows     []runrecord.CapacityWindow
	levels   levels
	inflight int
	outcome  string
	segment  string
	share    float64 // of every level's arrivals this instance sends (1 alone)
	// drain holds the load off after an overloaded window until the calls
	// it left in flight have ended, so the next window does not start on
	// its backlog.
	drain *drain
	// calm is the backlog a drain waits for: what the next level keeps in
	// flight without a queue (calmFor).
	calm int
	// perLevel is the least of the passing windows' mean calls in flight per
	// unit of level (0 before a pass): the least queued pass's, so it holds
	// the service alone and no backlog.
	perLevel float64
}

type drain struct {
	since     time.Time
	level     float64
	phase     string
	drainedAt time.Time // zero until in flight fell to calm
}

// saturatedFor is how long a window must show over-saturation, check
// after check, before it ends early: a tenth of the window, at least 2 s.
func saturatedFor(window time.Duration) time.Duration { return max(window/10, 2*checkEvery) }

// checkEvery is the grid the over-saturation test runs on, from each
// window's start.
const checkEvery = time.Second

// New checks the configuration and returns a search not yet started.
func New(cfg Config) (*Search, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Search{cfg: c, levels: levels{cfg: c}, share: 1}
	for _, o := range c.Objectives {
		if o.Figure == FigureTTFT && (s.ttftLimit == 0 || o.Limit < s.ttftLimit) {
			s.ttftLimit = o.Limit
		}
	}
	return s, nil
}

// Config is the search's configuration with its defaults filled.
func (s *Search) Config() Config { return s.cfg }

// SetSegment names the execution segment this instance runs, for the
// record, and the share of the test's load it carries (1 alone): an
// instance sees that share of every level's arrivals.
func (s *Search) SetSegment(seg string, share float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.segment = seg
	if share > 0 {
		s.share = share
	}
}

// Step is where the search stands.
type Step struct {
	Level  float64 // the level to run now
	Window int     // the current window's index (from 0)
	Done   bool    // the answer is known: stop the load
	// Draining: the load is held off (Level 0) until the last window's
	// backlog has ended.
	Draining bool
	Judged   int // windows judged so far
}

// Start starts the first window at origin (the test's start, the same on
// every instance). Later calls do nothing.
func (s *Search) Start(origin time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return
	}
	s.started, s.origin = true, origin
	s.open(origin, s.cfg.Min, "bracket")
}

func (s *Search) open(at time.Time, level float64, phase string) {
	warmEnd := at.Add(s.cfg.Warmup)
	length, longest := s.cfg.Window, s.cfg.MaxWindow
	if phase == phaseSustain {
		length, longest = s.cfg.Sustain, max(s.cfg.Sustain+s.cfg.Sustain/2, s.cfg.MaxWindow)
	}
	end := at.Add(length)
	s.cur = &window{index: len(s.rows), phase: phase, level: level, start: at, warmEnd: warmEnd,
		end: end, cap: at.Add(longest), nextJudge: end, nextCheck: warmEnd.Add(max(s.cfg.Window/4, 2*checkEvery))}
	s.wins = append(s.wins, s.cur)
}

func (s *Search) sec(t time.Time) float64 { return t.Sub(s.origin).Seconds() }

// Origin is the wall-clock time the windows' seconds count from; false
// before Start.
func (s *Search) Origin() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.origin, s.started
}

// Advance moves the search to now: every grid check and judging due by
// then is processed in order, each on what had happened by its own time,
// so the outcome does not depend on how often Advance is called.
func (s *Search) Advance(now time.Time) Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	open := s.cfg.Model == ModelRate
	s.drained(now)
	for s.cur != nil {
		w := s.cur
		// A sustain window is not stopped early: it is there to see the
		// level over the bursts a shorter window may mistake for a queue.
		if t := w.nextCheck; t.Before(w.end) && !t.After(w.nextJudge) && w.phase != phaseSustain {
			if t.After(now) {
				break
			}
			w.nextCheck = t.Add(checkEvery)
			// A queue growing for good shows at check after check; a burst
			// of random arrivals rises and passes.
			sat, why := w.saturated(t, open, s.ttftLimit)
			switch {
			case !sat:
				w.satSince = time.Time{}
			case w.satSince.IsZero():
				w.satSince = t
			}
			if sat && t.Sub(w.satSince) >= saturatedFor(s.cfg.Window) {
				s.close(w, t, why)
			}
			continue
		}
		if w.nextJudge.Add(judgeLag).After(now) {
			break
		}
		s.judgeAt(w, w.nextJudge)
		s.drained(now)
	}
	return s.step()
}

// judgeLag is how long after a judging time the search waits before it
// judges: a call sent just before the window's end is claimed when a VU
// takes its credit, and its end reported when its record is made, both a
// little after the times they carry. Judged at t, a window reads only what
// happened by t, so the wait changes no verdict; it lets those reports in.
const judgeLag = 500 * time.Millisecond

// tailEvery is how often a window past its end is judged again while the
// calls it measured finish.
const tailEvery = 250 * time.Millisecond

// judgeAt judges the window at t, its end or later. A decided window
// closes. An undecided one waits for its calls still in flight (its tail:
// the load goes on at its level, so they finish under the load they were
// sent into), up to a grace; then, with every call it will learn of, it is
// lengthened by half a window, its span taking in the calls sent since,
// and at its longest it fails as undecided.
func (s *Search) judgeAt(w *window, t time.Time) {
	row, decided := s.judge(w, t, "")
	if decided {
		s.closeRow(w, t, row)
		return
	}
	if _, inflight := w.calls(t); inflight > 0 && t.Before(w.end.Add(s.grace(w))) {
		w.nextJudge = t.Add(tailEvery)
		return
	}
	if next := w.end.Add(s.cfg.Window / 2); !next.After(s.longest(w, t)) {
		w.extensions++
		w.end = next
		w.nextJudge = maxTime(next, t)
		w.nextCheck = maxTime(w.nextCheck, t)
		return
	}
	row.Reason += fmt.Sprintf("; still undecided at its longest (%v), so it counts as a fail (a longer maxWindow lets "+
		"such a window run until its calls decide)", w.end.Sub(w.start))
	s.closeRow(w, t, row)
}

// longest is the latest end a lengthening of w may reach at t: its cap,
// or, with the default maxWindow, later when its calls call for it. When
// they come too slowly to decide in it: the end by which, at the rate they
// have come so far, they would number half again those a pass needs, times
// the arrivals' Burstiness (the closed model's calls per second are not
// known before they come), at most maxCallsTimes caps. And when its calls
// lean to a pass (leansPass): half a window more at a time, up to
// maxCallsTimes of the window-counted longest (windowsMaxWindow). Near a
// capacity under random arrivals the share of calls past a limit is close
// to the limit's tail and a burst delays them in long runs, each run one
// event to the bounds, so a window there needs many times the calls a pass
// needs; one under the capacity passes given them, and one cut at its cap
// counts as a fail and sends the search below where it need not. A window
// that leans to a fail stops at its cap: undecided, it already counts as
// one.
func (s *Search) longest(w *window, t time.Time) time.Time {
	if !s.cfg.callsBound {
		return w.cap
	}
	end := w.cap
	if lean := w.start.Add(maxCallsTimes * s.cfg.windowsMaxWindow()); w.leansPass && w.end.Before(lean) {
		end = maxTime(end, w.end.Add(s.cfg.Window/2))
	}
	calls, _ := w.calls(t)
	span := w.end.Sub(w.warmEnd)
	if len(calls) == 0 || span <= 0 {
		return end
	}
	need, _ := PassCalls(s.cfg.Objectives)
	enoughCalls := 1.5 * s.cfg.Burstiness() * float64(need)
	enough := w.warmEnd.Add(time.Duration(enoughCalls / float64(len(calls)) * float64(span)))
	limit := w.start.Add(maxCallsTimes * w.cap.Sub(w.start))
	return maxTime(end, minTime(enough, limit))
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// grace is how long a window's tail waits for its calls: twice the longest
// limit or the longest call it saw, at most half a window. A call still
// running then is judged censored.
func (s *Search) grace(w *window) time.Duration {
	return min(max(2*LongestLimit(s.cfg.Objectives), 2*w.longest, tailEvery), s.cfg.Window/2)
}

// drained opens the window a drain was holding once the calls in flight
// fell back to calm, or a window's length after it began (then the window
// starts on what is left).
func (s *Search) drained(now time.Time) {
	d := s.drain
	if d == nil {
		return
	}
	at := d.drainedAt
	if at.IsZero() {
		if now.Sub(d.since) < s.cfg.Window {
			return
		}
		at = d.since.Add(s.cfg.Window)
	}
	s.drain = nil
	s.open(at, d.level, d.phase)
}

// close ends the window at t as over-saturated (early says why).
func (s *Search) close(w *window, t time.Time, early string) {
	row, _ := s.judge(w, t, early)
	s.closeRow(w, t, row)
}

// closeRow records the window's row and opens the next one (or ends the
// search).
func (s *Search) closeRow(w *window, t time.Time, row runrecord.CapacityWindow) {
	s.rows = append(s.rows, row)
	s.cur = nil
	next, phase, outcome := s.levels.next(row)
	if outcome != "" || len(s.rows) >= s.cfg.MaxWindows {
		if outcome == "" {
			outcome = "unfinished"
		}
		s.outcome = outcome
		return
	}
	if row.Verdict == "pass" {
		s.notePass(w)
	}
	s.calm = calmFor(s.perLevel, next)
	if row.Verdict == "fail" && s.inflight > s.calm {
		s.drain = &drain{since: t, level: next, phase: phase}
		return
	}
	s.open(t, next, phase)
}

func (s *Search) step() Step {
	st := Step{Judged: len(s.rows), Done: s.outcome != ""}
	if s.cur != nil {
		st.Level, st.Window = s.cur.level, s.cur.index
	} else if n := len(s.rows); n > 0 {
		st.Level, st.Window = s.rows[n-1].Level, n-1
	}
	if !s.started {
		st.Level = s.cfg.Min
	}
	if s.drain != nil {
		st.Level, st.Draining, st.Window = 0, true, len(s.rows)
	}
	return st
}

// notePass keeps the least calls in flight per unit of level of the
// passing windows.
func (s *Search) notePass(w *window) {
	if r := meanInFlight(w) / w.level; r > 0 && (s.perLevel == 0 || r < s.perLevel) {
		s.perLevel = r
	}
}

// calmFor is the backlog a drain waits for before a window at level: the
// calls that level keeps in flight without a queue, plus one. It scales the
// least queued passing window's calls in flight per unit of level (Little's
// law: in flight = rate × service time, or the concurrency itself), not the
// last pass's: a pass just under the capacity already carries a queue, and a
// window opened on it starts on that backlog and fails where it need not.
func calmFor(perLevel, level float64) int {
	if perLevel <= 0 {
		return 1
	}
	return int(math.Ceil(perLevel*level)) + 1
}

// meanInFlight is the window's mean of calls in flight, as its claims saw it.
func meanInFlight(w *window) float64 {
	if len(w.queuePts) == 0 {
		return 0
	}
	var sum float64
	for _, p := range w.queuePts {
		sum += p.y
	}
	return sum / float64(len(w.queuePts))
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Claim records a call the search's load started at at (its due time, or
// when it took its concurrency slot) and how late its credit was handed
// out (0 for the closed model).
func (s *Search) Claim(at time.Time, lag time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.windowAt(at)
	if w == nil {
		return
	}
	s.inflight++
	w.insert(&claim{at: at})
	x := w.x(at)
	w.queuePts = append(w.queuePts, point{x, float64(s.inflight), x})
	if s.cfg.Model == ModelRate {
		w.latePts = append(w.latePts, point{x, measure.MS(lag), x + lag.Seconds()})
	}
}

// Finish records a call's end from its record. Calls of setup and
// teardown, and calls the search did not start, are left out.
func (s *Search) Finish(c *record.Call) {
	if c == nil || c.Phase != "" || (s.cfg.Model == ModelRate && c.Due.IsZero()) {
		return
	}
	key, f := finishedOf(c)
	s.mu.Lock()
	defer s.mu.Unlock()
	// The window the call was claimed in: a judged window keeps it too, so
	// the calls in flight stay counted right (its verdict read only calls
	// that had ended by its own judging time).
	if w := s.windowAt(key); w != nil && w.attach(key, f, s.cfg.Model == ModelRate) {
		s.inflight = max(s.inflight-1, 0)
		if d := s.drain; d != nil && d.drainedAt.IsZero() && s.inflight <= s.calm {
			d.drainedAt = maxTime(c.End, d.since)
		}
	}
}

// windowAt is the window that was running at t (nil before the first).
func (s *Search) windowAt(t time.Time) *window {
	for i := len(s.wins) - 1; i >= 0; i-- {
		if !t.Before(s.wins[i].start) {
			return s.wins[i]
		}
	}
	return nil
}

// Waiting records the server's count of waiting requests read at at.
func (s *Search) Waiting(at time.Time, n float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.cur; w != nil && !at.Before(w.start) {
		w.waitPts = append(w.waitPts, point{w.x(at), n, w.x(at)})
	}
}

// Result is the answer so far (the whole one once Step.Done).
func (s *Search) Result() *runrecord.Capacity {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &runrecord.Capacity{Model: s.cfg.Model, Unit: unitOf(s.cfg.Model), Min: s.cfg.Min, Max: s.cfg.Max,
		WindowS: s.cfg.Window.Seconds(), WarmupS: s.cfg.Warmup.Seconds(), MaxWindowS: s.cfg.MaxWindow.Seconds(),
		SustainS: s.cfg.Sustain.Seconds(), Confidence: Confidence, Arrivals: s.cfg.Arrivals, CV: s.cfg.CV, Precision: s.cfg.Precision, Share: s.cfg.Share,
		Method: method, Segment: s.segment, Windows: append([]runrecord.CapacityWindow(nil), s.rows...)}
	for _, o := range s.cfg.Objectives {
		c.Objectives = append(c.Objectives, runrecord.CapacityObjective{Text: o.Text, Client: o.Client, Figure: o.Figure,
			Quantile: o.Quantile, Limit: o.Limit})
	}
	c.Outcome = s.outcome
	if c.Outcome == "" {
		c.Outcome = "unfinished"
	}
	s.levels.answer(c)
	if s.cfg.Trace != nil {
		c.Trace = &runrecord.CapacityTrace{Name: s.cfg.Trace.Name, Rows: s.cfg.Trace.Rows, MeanRate: s.cfg.Trace.MeanRate}
		c.WithTraceScales()
	}
	return c
}

const method = "bracketing ×2 from min, then bisection in log space between the last pass and the first fail, " +
	"each window judged by one-sided 95 % order-statistic bounds (lengthened while its calls cannot decide), " +
	"verdicts read from an isotonic fit of every window's margins, the answer confirmed by a sustain window"

func unitOf(model string) string {
	if model == ModelConcurrency {
		return "in flight"
	}
	return "req/s"
}

// String describes the answer in one line (for logs).
func String(c *runrecord.Capacity) string {
	switch c.Outcome {
	case "below_min":
		if c.MinUndecided() {
			return fmt.Sprintf("capacity below min: the calls at the first level (%g %s) could not show it holds "+
				"(a longer maxWindow lets its window run until they can)", c.Min, c.Unit)
		}
		return fmt.Sprintf("capacity below min: the first level (%g %s) already failed", c.Min, c.Unit)
	case "above_max":
		return fmt.Sprintf("capacity above max: the top of the range (%g %s) passed", c.Max, c.Unit) + c.Assurance()
	}
	if c.Capacity == nil {
		return "capacity unknown: no level passed before the search ended"
	}
	s := fmt.Sprintf("capacity %.3g %s", *c.Capacity, c.Unit)
	if c.Trace != nil && c.Trace.Scale != nil {
		s += fmt.Sprintf(" (%s at %.3g× its recorded speed)", c.Trace.Name, *c.Trace.Scale)
	}
	s += c.Assurance()
	if c.FirstFail != nil {
		s += fmt.Sprintf(" (first fail %.3g)", *c.FirstFail)
	}
	if c.Binding != "" {
		s += ", bound by " + c.Binding
	}
	if c.Recommended != nil {
		s += fmt.Sprintf("; plan at %.3g (%.0f%%)", *c.Recommended, 100*c.Share)
	}
	if c.Outcome == "unfinished" {
		s += "; unfinished: the search ended before the precision was reached"
	}
	return s
}
