package schedule

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

// Credit is one send the schedule asks for.
type Credit struct {
	Seq    uint64        // its index in the whole test's schedule (all instances)
	Offset time.Duration // when it is due, from the schedule's start
	Due    time.Time     // the same, on the clock
	// Lag is how late it was handed out: the claim's time − Due, 0 when a VU
	// was waiting for it. The send that follows adds its own microseconds;
	// the call measures send − due itself.
	Lag time.Duration
}

// lateAfter is the lag below which a claim counts as on time: timer
// granularity and scheduling noise, not a VU shortage.
const lateAfter = time.Millisecond

// Schedule is one instance's part of the test's schedule (the whole test
// when it runs alone). Its clock starts at the first claim.
type Schedule struct {
	kind     string
	newSrc   func() source
	share    dataset.Share
	duration time.Duration // no credit due at or after it; 0: until the source ends
	now      func() time.Time

	// head is held by the one VU that waits for the next credit: the others
	// queue behind it, so a credit is claimed at its due time (and a rate
	// change moves every credit not yet claimed).
	head chan struct{}

	mu      sync.Mutex
	src     source
	warp    warp
	changed chan struct{} // closed when the speed changes, to wake the head
	started bool
	origin  time.Time
	peeked  bool // pending holds the next credit of this instance
	pending pendingCredit
	over    bool
	g       uint64 // global index of the next credit the source gives
	stopped time.Time

	claimed uint64
	late    uint64
	dropped uint64 // credits Abandon handed over as dropped
	maxLag  time.Duration
	sumLag  time.Duration

	parts map[string]*Schedule
}

type pendingCredit struct {
	seq uint64
	pos float64
}

// Options are what every kind of schedule takes.
type Options struct {
	Rate     float64       // credits per second (synthetic), or the time multiplier (trace: 2 = twice as fast)
	Duration time.Duration // the schedule's length; 0 = until the source ends (traces)
}

// Constant is a fixed rate: credits evenly spaced, the first at the start.
func Constant(o Options) (*Schedule, error) {
	return build("constant", o, true, func() source { return &evenSource{} })
}

// Poisson is random arrivals at a mean rate (exponential gaps), seeded.
func Poisson(o Options, seed uint64) (*Schedule, error) {
	return build("poisson", o, true, func() source { return newGapSource(1, seed) })
}

// maxCV keeps the gamma shape away from values where samples underflow.
const maxCV = 30

// Gamma is bursty arrivals: gamma gaps with coefficient of variation cv
// (1 = Poisson, above 1 bursty), seeded.
func Gamma(o Options, cv float64, seed uint64) (*Schedule, error) {
	if !(cv > 0) || cv > maxCV {
		return nil, fmt.Errorf("schedule: cv must be in (0, %d], got %v", maxCV, cv)
	}
	return build("gamma", o, true, func() source { return newGapSource(cv, seed) })
}

// Offsets replays fixed offsets in seconds (a trace's, ascending), at
// o.Rate times their speed (1 when 0), once, or looped until o.Duration.
func Offsets(offsets Times, loop bool, o Options) (*Schedule, error) {
	if offsets.Len == 0 {
		return nil, errors.New("schedule: the trace has no rows to replay")
	}
	if o.Rate == 0 {
		o.Rate = 1
	}
	if loop && o.Duration <= 0 {
		return nil, errors.New("schedule: a looped trace needs a duration")
	}
	return build("trace", o, false, func() source { return newOffsetSource(offsets, loop) })
}

func build(kind string, o Options, needDuration bool, newSrc func() source) (*Schedule, error) {
	if err := checkRate(o.Rate); err != nil {
		return nil, err
	}
	if o.Duration < 0 || (needDuration && o.Duration == 0) {
		return nil, fmt.Errorf("schedule: duration must be positive (the schedule's length, e.g. '60s'), got %v", o.Duration)
	}
	return newSchedule(kind, newSrc, o, dataset.Share{}), nil
}

func checkRate(r float64) error {
	if !(r > 0) || math.IsInf(r, 0) {
		return fmt.Errorf("schedule: rate must be a positive number, got %v", r)
	}
	return nil
}

func newSchedule(kind string, newSrc func() source, o Options, share dataset.Share) *Schedule {
	return &Schedule{
		kind: kind, newSrc: newSrc, share: share, duration: o.Duration, now: time.Now,
		head: make(chan struct{}, 1), src: newSrc(), warp: newWarp(o.Rate), changed: make(chan struct{}),
	}
}

// Kind is "constant", "poisson", "gamma" or "trace".
func (s *Schedule) Kind() string { return s.kind }

// Part returns the schedule of the instance running share sh: the same
// global sequence, keeping only that instance's credits. Every caller gets
// the same schedule. Rate changes made on s before are not carried over:
// split first (the binding does, at the first claim).
func (s *Schedule) Part(sh dataset.Share) *Schedule {
	if sh.Full() {
		return s
	}
	key := sh.Segment() + " in " + sh.Sequence()
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.parts[key]
	if !ok {
		p = newSchedule(s.kind, s.newSrc, Options{Rate: s.warp.segs[0].speed, Duration: s.duration}, sh)
		p.now = s.now
		if s.parts == nil {
			s.parts = map[string]*Schedule{}
		}
		s.parts[key] = p
	}
	return p
}

// peek fills pending with this instance's next credit (s.mu held); false
// when the schedule is over.
func (s *Schedule) peek() bool {
	if s.peeked {
		return true
	}
	if s.over {
		return false
	}
	for {
		pos, ok := s.src.next()
		g := s.g
		s.g++
		if !ok {
			s.over = true
			return false
		}
		if s.share.Owns(g) {
			s.pending, s.peeked = pendingCredit{seq: g, pos: pos}, true
			// A held clock gives no offset yet: the credit waits for the
			// speed to be set again, not the schedule's end.
			if off := s.warp.offset(pos); s.duration > 0 && off != never && off >= s.duration {
				s.over, s.peeked = true, false
				return false
			}
			return true
		}
	}
}

// ErrOver is returned by Next when every credit has been handed out.
var ErrOver = errors.New("schedule: over")

// Next waits until this instance's next credit is due and claims it. It
// returns ErrOver when the schedule has no more credits, and ctx's error
// when ctx ends first (the test is stopping): that moment is when the
// credits still due stop counting as dropped.
func (s *Schedule) Next(ctx context.Context) (Credit, error) {
	if ctx.Err() != nil {
		s.stop()
		return Credit{}, ctx.Err()
	}
	select {
	case s.head <- struct{}{}:
	case <-ctx.Done():
		s.stop()
		return Credit{}, ctx.Err()
	}
	defer func() { <-s.head }()
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		s.mu.Lock()
		now := s.now()
		if !s.started {
			s.started, s.origin = true, now
		}
		if !s.peek() {
			s.mu.Unlock()
			return Credit{}, ErrOver
		}
		off := s.warp.offset(s.pending.pos)
		if off == never { // held: wait for the speed to be set again
			changed := s.changed
			s.mu.Unlock()
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				s.stop()
				return Credit{}, ctx.Err()
			}
		}
		due := s.origin.Add(off)
		wait := due.Sub(now)
		if wait <= 0 {
			c := Credit{Seq: s.pending.seq, Offset: off, Due: due, Lag: -wait}
			s.peeked = false
			s.claimed++
			s.sumLag += c.Lag
			if c.Lag > lateAfter {
				s.late++
				s.maxLag = max(s.maxLag, c.Lag)
			}
			s.mu.Unlock()
			return c, nil
		}
		changed := s.changed
		s.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		select {
		case <-timer.C:
		case <-changed:
		case <-ctx.Done():
			s.stop()
			return Credit{}, ctx.Err()
		}
	}
}

// stop notes when the test began to stop (the first claim its end cut
// short).
func (s *Schedule) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped.IsZero() {
		s.stopped = s.now()
	}
}

// SetRate changes the speed (credits/s; a trace's time multiplier) from
// offset at on, counted from the schedule's start: every instance that makes
// the same change computes the same due times. A change cannot reach back
// behind the credits already claimed, nor behind now: it then takes effect
// at the later of the two. It returns the offset it took effect at.
func (s *Schedule) SetRate(rate float64, at time.Duration) (time.Duration, error) {
	if err := checkRate(rate); err != nil {
		return 0, err
	}
	return s.setSpeed(rate, at), nil
}

// Hold stops the schedule's clock from offset at on (as SetRate places it):
// no credit after the ones due by then falls due until SetRate starts it
// again, and the position it stopped at is where it goes on, so a trace
// resumes where it was held. Nothing is due meanwhile, so nothing held is
// late or dropped. It returns the offset it took effect at.
func (s *Schedule) Hold(at time.Duration) time.Duration { return s.setSpeed(0, at) }

func (s *Schedule) setSpeed(rate float64, at time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	floor := s.warp.segs[len(s.warp.segs)-1].at
	if s.started {
		floor = max(floor, s.now().Sub(s.origin))
	}
	at = max(at, floor)
	s.warp.change(rate, at)
	close(s.changed)
	s.changed = make(chan struct{})
	return at
}

// End is when the schedule's duration ends (zero before the first claim, or
// without a duration).
func (s *Schedule) End() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.duration == 0 {
		return time.Time{}
	}
	return s.origin.Add(s.duration)
}

// Rate is the speed at offset at (credits/s; a trace's time multiplier).
func (s *Schedule) Rate(at time.Duration) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.warp.speed(at)
}

// Stats says how the VUs kept up with the schedule.
type Stats struct {
	Kind    string
	Claimed uint64        // credits handed out
	Late    uint64        // of them, claimed more than 1 ms after they were due
	MaxLag  time.Duration // the latest a credit was claimed
	MeanLag time.Duration
	// Dropped counts credits that were due (before the test stopped) but
	// never claimed: sends the test owed and never made, whether Abandon
	// handed them over or not.
	Dropped uint64
	Over    bool          // every credit was handed out
	Elapsed time.Duration // from the first claim to the end counted
	Segment string        // the execution segment this instance runs ("0:1": all)
	Share   float64       // the fraction of the credits this instance runs
}

// maxDroppedCount bounds the look-ahead that counts dropped credits.
const maxDroppedCount = 50_000_000

// Stats returns the counters at the moment of the call, counting as dropped
// every credit due before the test stopped (or before now, while it runs).
func (s *Schedule) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Stats{Kind: s.kind, Claimed: s.claimed, Late: s.late, MaxLag: s.maxLag, Over: s.over,
		Segment: s.share.Segment(), Share: s.share.Fraction(), Dropped: s.dropped}
	if s.claimed > 0 {
		st.MeanLag = s.sumLag / time.Duration(s.claimed) // #nosec G115 -- a count of claims
	}
	if !s.started {
		return st
	}
	until := s.until()
	st.Elapsed = until
	st.Dropped += s.droppedUntil(until)
	return st
}

// until is the offset up to which unclaimed credits count as dropped: when
// the test began to stop (now while it runs), within the duration (s.mu
// held, s.started).
func (s *Schedule) until() time.Duration {
	end := s.now()
	if !s.stopped.IsZero() && s.stopped.Before(end) {
		end = s.stopped
	}
	until := end.Sub(s.origin)
	if s.duration > 0 {
		until = min(until, s.duration)
	}
	return until
}

// Abandon is for a test that is stopping: it marks now as the stop (unless
// an earlier one was) and hands over every credit of this instance that was
// due before it and never claimed, each once whichever VU asks (the source
// moves past them), so their failures are emitted exactly once. They stay
// in Stats' Dropped; credits due after the stop are not dropped.
func (s *Schedule) Abandon() []Credit {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return nil // nothing was due yet
	}
	if s.stopped.IsZero() {
		s.stopped = s.now()
	}
	until := s.until()
	var out []Credit
	for len(out) < maxDroppedCount && s.peek() {
		off := s.warp.offset(s.pending.pos)
		if off >= until {
			break
		}
		out = append(out, Credit{Seq: s.pending.seq, Offset: off, Due: s.origin.Add(off)})
		s.peeked = false
	}
	s.dropped += uint64(len(out))
	return out
}

// droppedUntil counts this instance's unclaimed credits due before until,
// on a copy of the source (s.mu held).
func (s *Schedule) droppedUntil(until time.Duration) uint64 {
	src, g := s.src.clone(), s.g
	var n uint64
	if s.peeked {
		if s.warp.offset(s.pending.pos) >= until {
			return 0
		}
		n++
	} else if s.over {
		return 0
	}
	for n < maxDroppedCount {
		pos, ok := src.next()
		if !ok {
			break
		}
		owned := s.share.Owns(g)
		g++
		if !owned {
			continue
		}
		if s.warp.offset(pos) >= until {
			break
		}
		n++
	}
	return n
}

// Plan lists this instance's credits due before until, from the start, at
// the speeds set so far (a fresh copy: the schedule is not advanced), at most
// limit of them: the schedule a script or a test can look at ahead.
func (s *Schedule) Plan(until time.Duration, limit int) []Credit {
	s.mu.Lock()
	w := warp{segs: append([]warpSeg(nil), s.warp.segs...)}
	s.mu.Unlock()
	if s.duration > 0 {
		until = min(until, s.duration)
	}
	src := s.newSrc()
	var out []Credit
	for g := uint64(0); len(out) < limit; g++ {
		pos, ok := src.next()
		if !ok {
			break
		}
		if !s.share.Owns(g) {
			continue
		}
		off := w.offset(pos)
		if off >= until {
			break
		}
		out = append(out, Credit{Seq: g, Offset: off})
	}
	return out
}
