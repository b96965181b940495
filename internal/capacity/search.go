package capacity

import (
	"fmt"
	"math"
	"sync"
	"time"

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

// checkEvery is the grid the over-saturation test runs on, from each
// window's start.
const checkEvery = time.Second

// New checks the configuration and returns a search not yet started.
func New(cfg Config) (*Search, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Search{cfg: c, levels: levels{cfg: c}}
	for _, o := range c.Objectives {
		if o.Figure == FigureTTFT && (s.ttftLimit == 0 || o.Limit < s.ttftLimit) {
			s.ttftLimit = o.Limit
		}
	}
	return s, nil
}

// Config is the search's configuration with its defaults filled.
func (s *Search) Config() Config { return s.cfg }

// SetSegment names the execution segment this instance runs, for the record.
func (s *Search) SetSegment(seg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.segment = seg
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
	s.cur = &window{index: len(s.rows), phase: phase, level: level, start: at, warmEnd: warmEnd,
		end: at.Add(s.cfg.Window), nextCheck: warmEnd.Add(max(s.cfg.Window/4, 2*checkEvery))}
	s.wins = append(s.wins, s.cur)
}

func (s *Search) sec(t time.Time) float64 { return t.Sub(s.origin).Seconds() }

// Advance moves the search to now: every grid check and window end due by
// then is processed in order, each judged on what had happened by its own
// time, so the outcome does not depend on how often Advance is called.
func (s *Search) Advance(now time.Time) Step {
	s.mu.Lock()
	defer s.mu.Unlock()
	open := s.cfg.Model == ModelRate
	s.drained(now)
	for s.cur != nil {
		w := s.cur
		if t := w.nextCheck; t.Before(w.end) {
			if t.After(now) {
				break
			}
			w.nextCheck = t.Add(checkEvery)
			if sat, why := w.saturated(t, open); sat {
				s.close(w, t, why)
			}
			continue
		}
		if w.end.After(now) {
			break
		}
		s.endWindow(w, w.end)
		s.drained(now)
	}
	return s.step()
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

// endWindow is a window reaching its planned end: lengthened once by half
// when it has not settled, judged otherwise.
func (s *Search) endWindow(w *window, t time.Time) {
	un, _ := w.unsettled(t, s.cfg.Model == ModelRate, s.ttftLimit)
	few := len(w.calls(t)) < minCalls
	// Once for a trend, twice for too few calls (a slow level's first
	// windows): each time by half the window.
	if (un && w.extensions == 0) || (few && w.extensions < 2) {
		w.extensions++
		w.end = w.end.Add(s.cfg.Window / 2)
		return
	}
	s.close(w, t, "")
}

// close judges the window at t and opens the next one (or ends the search).
func (s *Search) close(w *window, t time.Time, early string) {
	row := s.judge(w, t, early)
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
	w.claims = append(w.claims, &claim{at: at})
	x := w.x(at)
	w.queuePts = append(w.queuePts, point{x, float64(s.inflight), x})
	if s.cfg.Model == ModelRate {
		w.latePts = append(w.latePts, point{x, ms(lag), x + lag.Seconds()})
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
		WindowS: s.cfg.Window.Seconds(), WarmupS: s.cfg.Warmup.Seconds(), Precision: s.cfg.Precision, Share: s.cfg.Share,
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
	"verdicts read from an isotonic fit of every window's margins, the boundary confirmed once"

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
		return fmt.Sprintf("capacity below min: the first level (%g %s) already failed", c.Min, c.Unit)
	case "above_max":
		return fmt.Sprintf("capacity above max: the top of the range (%g %s) passed", c.Max, c.Unit)
	}
	if c.Capacity == nil {
		return "capacity unknown: no level passed before the search ended"
	}
	s := fmt.Sprintf("capacity %.3g %s", *c.Capacity, c.Unit)
	if c.Trace != nil && c.Trace.Scale != nil {
		s += fmt.Sprintf(" (%s at %.3g× its recorded speed)", c.Trace.Name, *c.Trace.Scale)
	}
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
