package sim

import (
	"errors"
	"math"
	"sort"
	"sync"
	"time"
)

// Outcome is how a request ended, as counted in /metrics and written in the trace.
type Outcome string

// Outcomes.
const (
	OutcomeOK         Outcome = "ok"
	OutcomeQueueFull  Outcome = "queue_full"       // 429: the waiting queue was full
	OutcomeBadRequest Outcome = "bad_request"      // 4xx: the request was invalid
	OutcomeStatus     Outcome = "fault_status"     // X-Sim-Fault status=CODE
	OutcomeHTML       Outcome = "fault_html"       // X-Sim-Fault html
	OutcomeDisconnect Outcome = "fault_disconnect" // connection closed mid-stream on purpose
	OutcomeError      Outcome = "fault_error"      // error event mid-stream on purpose
	OutcomeMalformed  Outcome = "fault_malformed"  // stream completed with an invalid JSON line
	OutcomeCanceled   Outcome = "canceled"         // the client went away
	OutcomeShutdown   Outcome = "shutdown"         // the server stopped
)

var (
	errQueueFull = errors.New("queue full")
	errClosed    = errors.New("engine closed")
)

// seqSpec is what the engine needs to run one request.
type seqSpec struct {
	PromptIDs    []uint32 // prompt token ids (prefix-cache keys); nil = not cacheable
	PromptTokens int
	OutputTokens int    // tokens to generate (>= 1)
	FinishReason string // when all OutputTokens are out: "length" or "stop"
	TextSeed     uint64 // seeds the output words (and their cache keys)
	Faults       Faults
}

// tokenEvent is one engine step's output for one sequence: tokens
// [From, From+N) produced at At. N == 0 never happens.
type tokenEvent struct {
	From, N int
	At      time.Time
	Cached  int // the request's cached prompt tokens
}

type seqState uint8

const (
	stWaiting seqState = iota
	stPrefill
	stDecode
	stDone
)

// Seq is one request inside an engine. Its timeline fields are final once
// take has reported the end.
type Seq struct {
	spec    seqSpec
	keys    []uint64 // prompt block keys
	endAt   int      // token count after which the sequence ends early; -1 none
	endWhy  Outcome
	points  []int // token counts where faults act, ascending (chunks stop there)
	stallIx int

	// engine state (engine lock)
	state       seqState
	canceled    bool
	prefillLeft int // prompt tokens still to prefill (work, >= 1)
	stepPrefill int // prefilled in the current step
	stepDecode  bool
	gen         int
	pausedUntil time.Time
	ttftDone    bool

	// timeline (engine clock)
	Enqueued, Admitted, PrefillStart, PrefillEnd, FirstToken, LastToken, Done time.Time
	CachedTokens                                                              int
	Outcome                                                                   Outcome

	evMu   sync.Mutex
	events []tokenEvent
	final  bool
	ready  chan struct{} // signalled when events or the end are available
	ended  chan struct{} // closed when the sequence has ended
}

// take moves the pending events to dst and reports whether the sequence ended
// (after these events).
func (s *Seq) take(dst []tokenEvent) ([]tokenEvent, bool) {
	s.evMu.Lock()
	dst = append(dst, s.events...)
	s.events = s.events[:0]
	final := s.final
	s.evMu.Unlock()
	return dst, final
}

func (s *Seq) push(ev tokenEvent) {
	s.evMu.Lock()
	s.events = append(s.events, ev)
	s.evMu.Unlock()
	s.signal()
}

func (s *Seq) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// engine is one model's continuous-batching scheduler. Each step admits
// waiting requests into free slots (FIFO), prefills admitted prompts (all of
// them, or a chunk budget), and gives every decoding sequence TokensPerStep
// tokens. Step time = [prefill base + per token × prefilled tokens] +
// [decode base + per sequence × decoding sequences]: a long prefill delays
// everyone's next token.
type engine struct {
	name  string
	p     ModelProfile
	clock Clock
	cache *prefixCache
	power *powerMeter // nil without a power model (power.go)

	mu      sync.Mutex
	waiting []*Seq
	running []*Seq
	started bool
	closed  bool
	stats   engineStats

	wake    chan struct{}
	done    chan struct{}
	stopped chan struct{}
}

type engineStats struct {
	promptTokens, generatedTokens int64
	cacheQueries, cacheHits       int64 // prompt tokens looked up / found in the prefix cache
	steps                         int64
	prefillTokens                 int64
	// Speculative decoding (spec_decode_acceptance): drafts, and per
	// position the accepted tokens, floor(drafts × share) exactly.
	specDrafts   int64
	specAccepted []int64
}

func ms(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Millisecond))) }

func newEngine(name string, p ModelProfile, clock Clock) *engine {
	e := &engine{
		name: name, p: p, clock: clock,
		wake: make(chan struct{}, 1), done: make(chan struct{}), stopped: make(chan struct{}),
	}
	if p.PrefixCache {
		e.cache = newPrefixCache(p.CacheBlockTokens, p.CacheCapacityBlks)
	}
	e.power = newPowerMeter(p, clock.Now())
	return e
}

func (e *engine) start() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started && !e.closed {
		e.started = true
		go e.loop()
	}
}

// close stops the loop; sequences still inside end with OutcomeShutdown.
func (e *engine) close() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		<-e.stopped
		return
	}
	e.closed = true
	if !e.started {
		e.shutdown()
		close(e.stopped)
	}
	e.mu.Unlock()
	close(e.done)
	<-e.stopped
}

// submit queues a request, or refuses it when max_queue requests already
// wait for a slot.
func (e *engine) submit(spec seqSpec) (*Seq, error) {
	s := &Seq{spec: spec, ready: make(chan struct{}, 1), ended: make(chan struct{})}
	s.endAt, s.endWhy = spec.Faults.endAt()
	s.points = faultPoints(&s.spec.Faults)
	if e.cache != nil && spec.PromptIDs != nil {
		s.keys = e.cache.blockHashes(spec.PromptIDs)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errClosed
	}
	free := e.p.MaxNumSeqs - len(e.running)
	if e.p.MaxQueue >= 0 && len(e.waiting)+1-free > e.p.MaxQueue {
		return nil, errQueueFull
	}
	s.Enqueued = e.clock.Now()
	e.waiting = append(e.waiting, s)
	e.kick()
	return s, nil
}

// cancel ends s (the client went away); its slot frees at the next step.
func (e *engine) cancel(s *Seq) {
	e.mu.Lock()
	if s.state != stDone {
		s.canceled = true
		e.kick()
	}
	e.mu.Unlock()
}

func (e *engine) kick() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func faultPoints(f *Faults) []int {
	var pts []int
	for _, st := range f.Stalls {
		pts = append(pts, st.After)
	}
	for _, k := range []int{f.Disconnect, f.Error, f.Malformed} {
		if k >= 0 {
			pts = append(pts, k)
		}
	}
	sort.Ints(pts)
	return pts
}

// maxLag is how far behind its schedule a busy engine may run before it
// gives up catching up (timers wake late, by about a millisecond).
const maxLag = 5 * time.Millisecond

// loop runs steps back to back. While busy, each step starts when the last
// one was due to end, so timer lateness does not add up over a stream.
func (e *engine) loop() {
	defer close(e.stopped)
	var due time.Time // when the last step was due to end; zero when idle
	for {
		e.mu.Lock()
		if e.closed {
			e.shutdown()
			e.mu.Unlock()
			return
		}
		now := e.clock.Now()
		// Keep to the schedule, unless a request came after the step was due:
		// a step never starts before a request it admits.
		if !due.IsZero() && now.After(due) && now.Sub(due) <= maxLag &&
			(len(e.waiting) == 0 || !e.waiting[len(e.waiting)-1].Enqueued.After(due)) {
			now = due
		}
		dur, wait, step := e.plan(now)
		e.mu.Unlock()
		if !step {
			due = time.Time{}
			e.clock.Wait(wait, e.wake, e.done)
			continue
		}
		due = now.Add(dur)
		if d := due.Sub(e.clock.Now()); d > 0 {
			e.clock.Wait(d, nil, e.done)
		}
		e.mu.Lock()
		e.finishStep(due)
		e.mu.Unlock()
	}
}

// plan starts a step at now. It returns the step's duration, or, when there
// is nothing to run, how long to sleep (-1: until woken).
func (e *engine) plan(now time.Time) (dur, wait time.Duration, step bool) {
	e.settle(now)
	// Admit, first come first served.
	for len(e.running) < e.p.MaxNumSeqs && len(e.waiting) > 0 {
		s := e.waiting[0]
		e.waiting[0] = nil
		e.waiting = e.waiting[1:]
		e.admit(s, now)
	}
	e.notePower(now)
	prefilling, prefillTokens, decoding, wait := e.batch(now)
	if prefilling == 0 && decoding == 0 {
		return 0, wait, false
	}
	var cost float64 // ms
	if prefilling > 0 {
		cost += e.p.PrefillBaseMs + e.p.PrefillPerTokenMs*float64(prefillTokens)
	}
	if decoding > 0 {
		cost += e.p.DecodeBaseMs + e.p.DecodePerSeqMs*float64(decoding)
	}
	dur = ms(cost)
	e.stats.steps++
	e.stats.prefillTokens += int64(prefillTokens)
	return dur, 0, true
}

// settle drops canceled requests, waiting or running, and ends the pauses
// that are over: one after the prefill emits the token the prefill made, one
// after the last token ends the answer.
func (e *engine) settle(now time.Time) {
	w := e.waiting[:0]
	for _, s := range e.waiting {
		if s.canceled {
			e.finish(s, now, OutcomeCanceled)
			continue
		}
		w = append(w, s)
	}
	clear(e.waiting[len(w):])
	e.waiting = w
	r := e.running[:0]
	for _, s := range e.running {
		switch {
		case s.canceled:
			e.finish(s, now, OutcomeCanceled)
		case s.state == stDecode && !now.Before(s.pausedUntil):
			if s.gen == 0 {
				e.emit(s, now)
			} else if s.gen >= s.spec.OutputTokens {
				e.finish(s, now, OutcomeOK)
			}
		}
		if s.state != stDone {
			r = append(r, s)
		}
	}
	clear(e.running[len(r):])
	e.running = r
}

// batch picks the step's work among the running sequences: prefill chunks
// within the chunk budget, in admission order, and every decoding sequence
// that is not paused. wait is the shortest pause left (-1: none).
func (e *engine) batch(now time.Time) (prefilling, prefillTokens, decoding int, wait time.Duration) {
	budget := math.MaxInt
	if e.p.PrefillChunkTokens > 0 {
		budget = e.p.PrefillChunkTokens
	}
	wait = -1
	for _, s := range e.running {
		switch s.state {
		case stPrefill:
			if budget == 0 {
				continue
			}
			n := min(s.prefillLeft, budget)
			budget -= n
			s.stepPrefill = n
			prefillTokens += n
			prefilling++
			if s.PrefillStart.IsZero() {
				s.PrefillStart = now
			}
		case stDecode:
			if now.Before(s.pausedUntil) {
				if d := s.pausedUntil.Sub(now); wait < 0 || d < wait {
					wait = d
				}
				continue
			}
			s.stepDecode = true
			decoding++
		}
	}
	return prefilling, prefillTokens, decoding, wait
}

func (e *engine) admit(s *Seq, now time.Time) {
	s.state = stPrefill
	s.Admitted = now
	prompt := s.spec.PromptTokens
	e.stats.promptTokens += int64(prompt)
	if e.cache != nil && s.keys != nil {
		// At least one prompt token is always computed (it yields the first
		// output token), so a fully cached prompt still prefills its last block.
		limit := max(prompt-1, 0) / e.cache.blockTokens
		s.CachedTokens = e.cache.match(s.keys, limit) * e.cache.blockTokens
		e.stats.cacheQueries += int64(prompt)
		e.stats.cacheHits += int64(s.CachedTokens)
	}
	s.prefillLeft = max(prompt-s.CachedTokens, 1)
	e.running = append(e.running, s)
}

// finishStep applies the step that ends at now.
func (e *engine) finishStep(now time.Time) {
	for _, s := range e.running {
		switch {
		case s.stepPrefill > 0:
			s.prefillLeft -= s.stepPrefill
			s.stepPrefill = 0
			if s.prefillLeft > 0 {
				continue
			}
			s.state = stDecode
			s.PrefillEnd = now
			if e.cache != nil && s.keys != nil {
				e.cache.insert(s.keys)
			}
			// The prefill pass yields the first token(s).
			if e.atBoundary(s, now) {
				e.emit(s, now)
			}
		case s.stepDecode:
			s.stepDecode = false
			e.draft()
			e.emit(s, now)
		}
	}
	r := e.running[:0]
	for _, s := range e.running {
		if s.state != stDone {
			r = append(r, s)
		}
	}
	clear(e.running[len(r):])
	e.running = r
	e.notePower(now)
}

// draft counts one speculative draft (a decode step of one sequence); the
// accepted tokens per position are the configured shares of the drafts,
// rounded down, so the exposed acceptance is the configured one exactly
// up to one token per position.
func (e *engine) draft() {
	acc := e.p.SpecDecodeAcceptance
	if len(acc) == 0 {
		return
	}
	e.stats.specDrafts++
	if e.stats.specAccepted == nil {
		e.stats.specAccepted = make([]int64, len(acc))
	}
	for i, a := range acc {
		e.stats.specAccepted[i] = int64(math.Floor(float64(e.stats.specDrafts)*a + 1e-9))
	}
}

// emit gives s its tokens for this step (stopping at the next fault point).
func (e *engine) emit(s *Seq, now time.Time) {
	n := min(e.p.TokensPerStep, s.spec.OutputTokens-s.gen)
	for _, p := range s.points {
		if p > s.gen {
			n = min(n, p-s.gen)
			break
		}
	}
	if n <= 0 {
		return
	}
	if s.gen == 0 {
		s.FirstToken = now
	}
	s.push(tokenEvent{From: s.gen, N: n, At: now, Cached: s.CachedTokens})
	s.gen += n
	s.LastToken = now
	e.stats.generatedTokens += int64(n)
	if !e.atBoundary(s, now) {
		return
	}
	if s.gen >= s.spec.OutputTokens && !now.Before(s.pausedUntil) {
		e.finish(s, now, OutcomeOK)
	}
}

// atBoundary applies the faults due after s.gen tokens and reports whether s
// goes on.
func (e *engine) atBoundary(s *Seq, now time.Time) bool {
	var pause time.Duration
	if s.gen == 0 && !s.ttftDone {
		s.ttftDone = true
		pause += s.spec.Faults.TTFT
	}
	stalls := s.spec.Faults.Stalls
	for s.stallIx < len(stalls) && stalls[s.stallIx].After <= s.gen {
		if stalls[s.stallIx].After == s.gen {
			pause += stalls[s.stallIx].Dur
		}
		s.stallIx++
	}
	if s.endAt == s.gen {
		e.finish(s, now, s.endWhy)
		return false
	}
	if pause > 0 {
		s.pausedUntil = now.Add(pause)
		return false
	}
	return true
}

func (e *engine) finish(s *Seq, now time.Time, why Outcome) {
	if s.state == stDone {
		return
	}
	if why == OutcomeOK && e.cache != nil && s.keys != nil {
		// Generated blocks are cached too, so the next turn of a conversation
		// (prompt + this answer + a new message) hits them.
		e.cache.insert(e.cache.blockHashes(e.fullSequence(s)))
	}
	s.state = stDone
	s.Done = now
	s.Outcome = why
	s.evMu.Lock()
	s.final = true
	s.evMu.Unlock()
	s.signal()
	close(s.ended)
}

func (e *engine) fullSequence(s *Seq) []uint32 {
	ids := make([]uint32, 0, len(s.spec.PromptIDs)+s.gen)
	ids = append(ids, s.spec.PromptIDs...)
	vids := vocabIDs()
	for i := range s.gen {
		ids = append(ids, vids[wordIndex(s.spec.TextSeed, i)])
	}
	return ids
}

func (e *engine) shutdown() {
	now := e.clock.Now()
	for _, s := range e.waiting {
		e.finish(s, now, OutcomeShutdown)
	}
	for _, s := range e.running {
		e.finish(s, now, OutcomeShutdown)
	}
	e.waiting, e.running = nil, nil
	e.notePower(now)
}

// seqTimeline is a copy of a sequence's timeline.
type seqTimeline struct {
	Enqueued, Admitted, PrefillStart, PrefillEnd, FirstToken, LastToken, Done time.Time
	CachedTokens, Generated                                                   int
	Outcome                                                                   Outcome
}

// timeline copies s's timeline (s may still be running).
func (e *engine) timeline(s *Seq) seqTimeline {
	e.mu.Lock()
	defer e.mu.Unlock()
	return seqTimeline{
		Enqueued: s.Enqueued, Admitted: s.Admitted, PrefillStart: s.PrefillStart, PrefillEnd: s.PrefillEnd,
		FirstToken: s.FirstToken, LastToken: s.LastToken, Done: s.Done,
		CachedTokens: s.CachedTokens, Generated: s.gen, Outcome: s.Outcome,
	}
}

// engineSnapshot is what /metrics shows of an engine.
type engineSnapshot struct {
	waiting, running int
	stats            engineStats
	cacheBlocks      int
	kvBlocks         int // KV blocks held by running sequences
	kvCapacity       int // KV blocks the engine has; 0 = not modelled
}

func (e *engine) snapshot() engineSnapshot {
	e.mu.Lock()
	defer e.mu.Unlock()
	snap := engineSnapshot{waiting: len(e.waiting), running: len(e.running), stats: e.stats}
	snap.stats.specAccepted = append([]int64(nil), e.stats.specAccepted...)
	if e.cache != nil {
		snap.cacheBlocks = e.cache.len()
		// KV blocks held by running sequences (prompt and output so far),
		// of the cache's capacity: vLLM's kv_cache_usage_perc.
		bt := e.cache.blockTokens
		for _, s := range e.running {
			snap.kvBlocks += (s.spec.PromptTokens + s.gen + bt - 1) / bt
		}
		snap.kvCapacity = e.cache.capacity
	}
	return snap
}
