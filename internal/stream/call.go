// Package stream reads one streamed LLM response and measures it: every event is
// timestamped when its bytes arrive (in the goroutine that reads the body, before
// any decoding), decoded by a protocol.Decoder, and folded into the figures of
// the clock (t0, TTFB, TTFT, gaps, TPOT: docs/design.md). It runs the
// attempt (Attempt: its timeouts, trace hooks and tap transport around any
// HTTP client's send) and finishes it: given the HTTP response, it classifies
// it, reads the stream, drains the body, and merges what headers and trailers
// say. It knows nothing of k6.
package stream

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// Defaults for the size limits, generous enough for the largest final events of
// the providers we know (tool-call arguments, Responses' response.completed).
const (
	DefaultMaxEventSize = 4 << 20
	DefaultMaxBodySize  = 256 << 20
)

// RawEvent is one framed event as it arrived, for per-event callbacks.
type RawEvent struct {
	Type string
	ID   string
	Data string
	At   time.Time
}

// Config shapes how a response is read.
type Config struct {
	Spec           *protocol.Spec
	MaxEventSize   int   // largest SSE event or NDJSON line, bytes
	MaxBodySize    int64 // largest response body, bytes
	StallThreshold time.Duration
	// DrainBytes and DrainTime bound the read to EOF after the end of the
	// stream (0 = DefaultDrainBytes, DefaultDrainTime).
	DrainBytes int64
	DrainTime  time.Duration
	// CountTokens, when set, counts the tokens of a piece of output text; it is
	// used when the server reports no usage.
	CountTokens func(string) int
	// OnEvent, when set, receives every event after it was timestamped and
	// decoded. It runs on the reading goroutine and must not block.
	OnEvent func(RawEvent)
	// Watchdog, when set, is told about bytes and the first output; it bounds
	// the drain in time and reports starvation and connection set-up.
	Watchdog *Watchdog
	// Redact, when set, cleans every error message (of credentials) before the
	// call keeps it.
	Redact func(string) string
	// Sizes, when set, sizes the answer's text and gaps from the client's
	// previous answer, and learns this one's.
	Sizes *Sizes
	// MaxTokens is the request's output limit (Spec.MaxTokens; 0 = none) and
	// RequireFinishReason the strict end rule: completeness.go.
	MaxTokens           int64
	RequireFinishReason bool
}

// Call is the state of one response being read.
type Call struct {
	cfg Config
	dec protocol.Decoder
	d   protocol.Delta

	Start   time.Time // t0: request handed to the transport (see Begin)
	Headers time.Time // response headers received (see Respond)
	resp    *http.Response

	firstOut, firstAns, lastOut, end time.Time
	// firstWindow is how long before its time the first output's bytes may
	// have come (Holder.Window); firstWindowKnown is false without a
	// watched connection.
	firstWindow      time.Duration
	firstWindowKnown bool
	// sent is when the request began to go out (Sent), set on the
	// transport's writing goroutine: its offset from sentBase plus one, 0
	// before (sentAt).
	sent atomic.Int64
	// setUp is how long the dial and TLS handshake of the connection the
	// call opened took themselves (SetUp, ns): the rest of its connect is
	// the wait of the transport's dialing goroutine for a CPU.
	setUp atomic.Int64

	chunks      int
	cumTokens   int64 // running completion count from streamed usage
	firstTokens int64 // tokens in the first output event (0 = unknown)
	cumulative  bool
	firstText   string

	gaps    Gaps
	choices []*choiceState // n > 1: per-choice state, nil while one answer is read (choices.go)
	gapSum  time.Duration
	gapN    int
	stalls  int

	text, reasoning strings.Builder
	tools           []ToolCall
	signed          signed // thoughts.go
	responseID      string

	usage    *protocol.Usage
	finish   string
	terminal bool
	sawDone  bool
	cleanEnd bool
	err      *Error
	reader   *timedReader
	// firstReader is the first body's reader (reader), framer the SSE
	// framer of the body being read and usageStore the first usage the
	// call got (usage), held in the call rather than allocated for each
	// call apart.
	firstReader timedReader
	framer      sseFramer
	usageStore  protocol.Usage
	clock       ArrivalClock // the connection's receive stamps (SetArrivalClock)
	held        Holder       // the clock, until the first output
	timings     map[string]float64
	model       string
	requestID   string

	// Resumption state (resume.go).
	lastEventID string
	retryHint   time.Duration
	retrySet    bool
	busy        time.Duration // parse time of previous connections
	starved     int           // starvation seen by previous connections' watchdogs
	connect     time.Duration // connection set-up of previous connections
}

// ToolCall is one accumulated tool call.
type ToolCall struct {
	Index     int    `js:"index"`
	ID        string `js:"id"`
	Name      string `js:"name"`
	Arguments string `js:"arguments"`
}

// NewCall prepares one attempt; start is t0, or zero when the request has not
// been handed to the transport yet (Begin sets it then).
func NewCall(cfg Config, start time.Time) *Call {
	c := new(Call)
	c.init(cfg, start)
	return c
}

// init readies a zero Call as NewCall does, in memory its caller made
// (freshAttempt).
func (c *Call) init(cfg Config, start time.Time) {
	if cfg.MaxEventSize <= 0 {
		cfg.MaxEventSize = DefaultMaxEventSize
	}
	if cfg.MaxBodySize <= 0 {
		cfg.MaxBodySize = DefaultMaxBodySize
	}
	c.cfg, c.dec, c.Start = cfg, cfg.Spec.NewDecoder(), start
}

// Begin sets t0, the moment the request is handed to the transport, once:
// redirects and reconnections keep the first.
func (c *Call) Begin(at time.Time) {
	if c.Start.IsZero() {
		c.Start = at
	}
}

// Sent notes that the request's bytes began to go out (its headers were
// written), the first time only: the transport's writing goroutine calls it,
// and how long after t0 it ran is time this process took to send the request
// (Result.SendWait).
func (c *Call) Sent(at time.Time) { c.sent.CompareAndSwap(0, int64(at.Sub(sentBase))+1) }

// sentBase is the origin of the calls' Sent times, taken once: an offset
// from it on the monotonic clock is stored without a time.Time allocated
// for every call, and comes back as a time with its monotonic reading.
var sentBase = time.Now() //nolint:gochecknoglobals // a fixed origin of the clock (a tap's TLS start too)

// sentAt is when the request began to go out; false before Sent.
func (c *Call) sentAt() (time.Time, bool) {
	v := c.sent.Load()
	if v == 0 {
		return time.Time{}, false
	}
	return sentBase.Add(time.Duration(v - 1)), true
}

// SetUp adds the time a dial or TLS handshake of the call's new connection
// took itself, as the transport reports it (on its dialing goroutine). A
// call's connect (Watchdog.Connect) also holds the waits of that goroutine
// for a CPU; with SetUp known they count in the send wait, as this
// process's.
func (c *Call) SetUp(d time.Duration) { c.setUp.Add(int64(max(d, 0))) }

// ArrivalClock dates the bytes a connection's latest read returned: now, or
// earlier when the bytes reached the machine before the reader got to them
// (internal/rxstamp reads the kernel's receive stamps).
type ArrivalClock interface {
	Arrival(now time.Time) time.Time
}

// SetArrivalClock gives the call the receive stamps of the connection its
// response comes on (nil: none); the headers' and every event's arrival are
// then when their bytes arrived, not when the reading goroutine ran.
//
// A clock that can watch its socket for the reader (a Holder) does so until
// the call's first output: a busy reader would otherwise read the first
// token together with the next one, under the later one's stamp
// (rxstamp.Conn.Hold). Holding for the whole call would keep every gap
// apart too, but the watcher would then look at every late event of every
// stream, and at hundreds of streams that costs the CPU the readers are late
// for; the first token is where a late read costs a whole decode step.
func (c *Call) SetArrivalClock(a ArrivalClock) {
	c.releaseClock()
	c.clock = a
	if h, ok := a.(Holder); ok {
		h.Hold()
		c.held = h
	}
}

// Holder is an ArrivalClock that, while held, keeps a late read from
// merging bytes that came apart, so each read keeps its own stamp, and knows
// how long before that stamp the latest read's bytes may have come (Window;
// false when it does not).
type Holder interface {
	ArrivalClock
	Hold()
	Release()
	Window() (time.Duration, bool)
}

// releaseClock ends the clock's hold, once.
func (c *Call) releaseClock() {
	if c.held != nil {
		c.held.Release()
		c.held = nil
	}
}

// Fail records a classified failure; the first one wins.
func (c *Call) Fail(t ErrorType, msg string) {
	if c.err == nil {
		if c.cfg.Redact != nil {
			msg = c.cfg.Redact(msg)
		}
		c.err = &Error{Type: t, Message: msg}
	}
}

// Err is the failure recorded so far, or nil.
func (c *Call) Err() *Error { return c.err }

// Consume reads body to its end (or to the first failure) and returns the read
// error, if any, for the caller to classify: only it knows the call's context.
func (c *Call) Consume(body io.Reader) error {
	if c.reader != nil { // a reopened call: keep the previous connections' parse time
		c.busy += c.reader.busy
	}
	r := &c.firstReader // the call's first body; a reopened call's next ones get their own
	if c.reader != nil {
		r = new(timedReader)
	}
	*r = timedReader{r: body, limit: c.cfg.MaxBodySize, clock: c.clock, floor: latest(c.Start, c.Headers)}
	c.reader = r
	c.reader.wd = c.cfg.Watchdog
	if c.cfg.Spec.Framing == protocol.FramingSSE && c.cfg.Spec.CompleteAtEOF {
		c.reader.retry = newRetryScanner(func(d time.Duration) { c.retryHint, c.retrySet = d, true })
	}
	defer func() {
		c.end = c.reader.last
		if c.end.IsZero() {
			c.end = time.Now()
		}
	}()
	var err error
	if c.cfg.Spec.Framing == protocol.FramingNDJSON {
		err = c.consumeNDJSON()
	} else {
		err = c.consumeSSE()
	}
	// A clean end: the body reached EOF (or [DONE]) with no read error. For
	// Spec.CompleteAtEOF protocols that is what completes the call.
	c.cleanEnd = err == nil
	return err
}

func (c *Call) consumeSSE() error {
	f := &c.framer // the call's: a reopened stream's next body reuses it
	f.init(c.reader, c.cfg.MaxEventSize)
	defer f.release()
	for {
		ev, err := f.next()
		if err == io.EOF { //nolint:errorlint // the framer returns io.EOF unwrapped at the end
			return nil
		}
		if err != nil {
			return c.framingError(err)
		}
		c.lastEventID = ev.ID
		if !c.handle(ev) {
			return nil
		}
	}
}

func (c *Call) consumeNDJSON() error {
	sc := bufio.NewScanner(c.reader)
	pooled := readBuffers.get()
	defer readBuffers.put(pooled)
	buf := *pooled
	// The scanner's limit is the larger of its max and its buffer's capacity:
	// under a limit smaller than the buffer, the buffer is cut to the limit.
	sc.Buffer(buf[:0:min(len(buf), c.cfg.MaxEventSize)], c.cfg.MaxEventSize)
	for sc.Scan() {
		line := strings.TrimSpace(borrow(sc.Bytes())) // borrowed like an SSE event's data
		if line == "" {
			continue
		}
		if !c.handle(protocol.Event{Data: line}) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return c.framingError(err)
	}
	return nil
}

// framingError turns size-limit failures into decode errors and passes read
// errors through for classification.
func (c *Call) framingError(err error) error {
	var se *Error
	switch {
	case errors.As(err, &se):
		c.Fail(se.Type, se.Message)
		return nil
	case errors.Is(err, bufio.ErrTooLong) || strings.Contains(err.Error(), "token too long"):
		c.Fail(ErrDecode, "an event exceeds maxEventSize")
		return nil
	}
	return err
}

// handle folds one event in; it returns false to stop reading.
func (c *Call) handle(ev protocol.Event) bool {
	at := c.reader.last
	if !utf8.ValidString(ev.Data) {
		// The streams we read are UTF-8 by definition (SSE, JSON): bytes that
		// are not mean a broken server or proxy, and text we cannot trust.
		c.Fail(ErrDecode, "event data is not valid UTF-8: "+Excerpt(strings.ToValidUTF8(ev.Data, "\ufffd"), 200))
		return false
	}
	c.d.Reset()
	if err := c.dec.Decode(ev, &c.d); err != nil {
		c.Fail(ErrDecode, err.Error()+": "+Excerpt(ev.Data, 200)) // a concatenation: a copy of its own
		return false
	}
	d := &c.d
	if c.cfg.OnEvent != nil {
		c.cfg.OnEvent(RawEvent{Type: ev.Type, ID: ev.ID, Data: strings.Clone(ev.Data), At: at})
	}
	// The event's data is borrowed (protocol.Event): what the call keeps of
	// it is copied, once, when it changes.
	keep(&c.model, d.Model)
	keep(&c.requestID, d.RequestID)
	keep(&c.responseID, d.ResponseID)
	for k, v := range d.ServerTimings {
		if c.timings == nil {
			c.timings = map[string]float64{}
		}
		c.timings[k] = v
	}
	ch, err := c.choice(d.Choice)
	if err != nil {
		c.Fail(ErrDecode, err.Error())
		return false
	}
	before := c.cumTokens
	if d.Usage != nil {
		if c.usage == nil { // the first: kept in the call (a later one merges into a new one)
			c.usageStore = *d.Usage
			c.usage = &c.usageStore
		} else {
			c.usage = mergeUsage(c.usage, d.Usage)
		}
		if d.UsageCumulative {
			c.cumulative = true
			c.cumTokens = d.Usage.CompletionTokens
		}
	}
	if d.HasOutput() {
		c.output(at, before, ch)
	}
	if len(d.Signatures) > 0 {
		c.signed.add(d.Signatures, c.reasoning.Len()) // after output: a signature closes the reasoning read so far
	}
	if d.FinishReason != "" {
		keep(&c.finish, d.FinishReason)
		if ch != nil {
			ch.finish = c.finish
		}
	}
	if d.Terminal {
		c.terminal = true
	}
	if d.Err != nil {
		msg := d.Err.Message
		if d.Err.Code != "" {
			msg = d.Err.Code + ": " + msg
		}
		c.Fail(ErrStream, strings.Clone(msg))
		return false
	}
	if d.EndOfStream {
		c.sawDone = true
		return false
	}
	return true
}

// output folds an output event in; ch is its choice's state when the call
// reads several answers (nil otherwise).
func (c *Call) output(at time.Time, cumBefore int64, ch *choiceState) {
	d := &c.d
	c.chunks++
	if c.firstOut.IsZero() {
		c.firstOut = at
		// On HTTP/2 the connection is read by its own goroutine, ahead of
		// this one: its latest read may have brought other bytes than
		// these, and its window says nothing of them.
		if c.held != nil && (c.resp == nil || c.resp.ProtoMajor < 2) {
			c.firstWindow, c.firstWindowKnown = c.held.Window()
		}
		c.releaseClock()
		c.cfg.Sizes.reserve(c)
		c.firstText = strings.Clone(d.Text + d.Reasoning)
		if c.cumulative {
			c.firstTokens = c.cumTokens - cumBefore
		}
		if c.cfg.Watchdog != nil {
			c.cfg.Watchdog.FirstOutput()
		}
	} else if ch == nil {
		c.gaps = append(c.gaps, c.countGap(at.Sub(c.lastOut)))
	}
	if c.firstAns.IsZero() && d.HasAnswer() {
		c.firstAns = at
	}
	if ch != nil {
		c.choiceGap(ch, at)
		ch.text.WriteString(d.Text)
		ch.reasoning.WriteString(d.Reasoning)
	}
	c.lastOut = at
	c.text.WriteString(d.Text) // every answer's: the token count covers them all
	c.reasoning.WriteString(d.Reasoning)
	for _, tc := range d.ToolCalls {
		c.addTool(tc)
	}
}

func (c *Call) addTool(tc protocol.ToolCallDelta) {
	for i := range c.tools {
		t := &c.tools[i]
		if (tc.ID != "" && t.ID == tc.ID) || (tc.ID == "" && t.Index == tc.Index) {
			if t.ID == "" {
				t.ID = strings.Clone(tc.ID)
			}
			t.Name = join(t.Name, tc.Name)
			t.Arguments = join(t.Arguments, tc.Args)
			return
		}
	}
	c.tools = append(c.tools, ToolCall{Index: tc.Index, ID: strings.Clone(tc.ID), Name: strings.Clone(tc.Name),
		Arguments: strings.Clone(tc.Args)})
}

// keep sets *dst to a copy of s when s is new (not empty, not already kept).
func keep(dst *string, s string) {
	if s != "" && s != *dst {
		*dst = strings.Clone(s)
	}
}

// join is a + b in memory of its own (a + "" would be b itself).
func join(a, b string) string {
	if a == "" {
		return strings.Clone(b)
	}
	return a + b
}

// mergeUsage keeps the latest non-zero figure of each field: providers report
// prompt tokens at the start and completion tokens at the end (Anthropic), or
// everything at the end (OpenAI).
func mergeUsage(old, u *protocol.Usage) *protocol.Usage {
	if old == nil {
		cp := *u
		return &cp
	}
	pick := func(a, b int64) int64 {
		if b != 0 {
			return b
		}
		return a
	}
	return &protocol.Usage{
		PromptTokens:     pick(old.PromptTokens, u.PromptTokens),
		CompletionTokens: pick(old.CompletionTokens, u.CompletionTokens),
		CachedTokens:     pick(old.CachedTokens, u.CachedTokens),
		CachedReported:   old.CachedReported || u.CachedReported,
		ReasoningTokens:  pick(old.ReasoningTokens, u.ReasoningTokens),
		TotalTokens:      pick(old.TotalTokens, u.TotalTokens),
	}
}

// Excerpt shortens s for an error message.
func Excerpt(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
