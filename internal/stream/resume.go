package stream

import "time"

// Resumable event streams: a raw SSE stream that breaks after
// some events can be reopened with Last-Event-ID, and the server may say how
// long to wait first with a retry: field. The call keeps its clock (t0, first
// token, gaps, text) across connections, so the reconnection shows as one long gap.

// LastEventID is the id of the last event received (the SSE "last event ID").
func (c *Call) LastEventID() string { return c.lastEventID }

// RetryHint is the reconnection delay the server asked for with retry:, if any.
func (c *Call) RetryHint() (time.Duration, bool) {
	return c.retryHint, c.retrySet
}

// SetWatchdog hands a reopened call the watchdog of its new connection; what
// the previous one saw (starvation, connection set-up) is kept.
func (c *Call) SetWatchdog(w *Watchdog) {
	if old := c.cfg.Watchdog; old != nil && old != w {
		c.starved += old.Starved()
		c.connect += old.Connect()
	}
	c.cfg.Watchdog = w
}

// Reopen prepares the call to read the body of a new connection: the failure
// that ended the previous one is forgotten, everything measured is kept.
func (c *Call) Reopen() {
	c.err = nil
	c.cleanEnd = false
	c.end = time.Time{}
	c.sawDone = false
	c.releaseClock()
	c.clock = nil // the new connection's comes with it
}

// retryScanner watches raw stream bytes for "retry:" fields, which the SSE
// framer ignores (as go-sse's Read, its oracle, does). It keeps only the state
// of the current line, so it costs a byte comparison per byte and survives any
// split of the input.
type retryScanner struct {
	atLineStart bool
	prevCR      bool
	match       int   // bytes of "retry:" matched at the start of this line
	digits      int64 // the value so far
	nDigits     int
	inValue     bool
	spaced      bool
	valid       bool
	onValue     func(time.Duration)
}

const retryField = "retry:"

func newRetryScanner(onValue func(time.Duration)) *retryScanner {
	return &retryScanner{atLineStart: true, onValue: onValue}
}

func (s *retryScanner) write(p []byte) {
	for _, b := range p {
		if b == '\n' && s.prevCR { // the LF of a CRLF: the line already ended
			s.prevCR = false
			continue
		}
		s.prevCR = b == '\r'
		if b == '\n' || b == '\r' {
			if s.inValue && s.valid && s.nDigits > 0 {
				s.onValue(time.Duration(s.digits) * time.Millisecond)
			}
			*s = retryScanner{atLineStart: true, prevCR: s.prevCR, onValue: s.onValue}
			continue
		}
		switch {
		case s.inValue:
			switch {
			case b == ' ' && s.nDigits == 0 && !s.spaced: // the one space after the colon
				s.spaced = true
			case b >= '0' && b <= '9' && s.digits < 1<<40:
				s.digits = s.digits*10 + int64(b-'0')
				s.nDigits++
			default:
				s.valid = false // the spec ignores a retry value that is not all ASCII digits
			}
		case s.atLineStart && s.match < len(retryField) && b == retryField[s.match]:
			s.match++
			if s.match == len(retryField) {
				s.inValue, s.valid = true, true
			}
		default:
			s.atLineStart = false
		}
	}
}
