package stream

import (
	"io"
	"time"
)

// timedReader stamps every read of the body with its arrival time and counts the
// time the client spends between reads (framing, decoding, dispatching): every
// event framed before the next Read arrived with the bytes of the last one, so
// its arrival time is `last`.
type timedReader struct {
	r        io.Reader
	clock    ArrivalClock  // the connection's receive stamps; nil: the clock at Read's return
	last     time.Time     // when the bytes of the latest Read arrived
	returned time.Time     // when the latest Read returned
	floor    time.Time     // no arrival is earlier: the headers', else t0
	busy     time.Duration // time spent outside Read since the first byte
	bytes    int64
	eof      bool      // the body was read to its end
	wd       *Watchdog // told of each Read that returned bytes (nil: none)
	limit    int64     // maximum body bytes; 0 = no limit
	retry    *retryScanner
}

var errBodyTooLarge = &Error{Type: ErrDecode, Message: "response body exceeds maxBodySize"}

func (t *timedReader) Read(p []byte) (int, error) {
	if !t.returned.IsZero() {
		t.busy += time.Since(t.returned)
	}
	prev := t.last
	n, err := t.r.Read(p)
	t.returned = time.Now()
	t.last = t.returned
	if n > 0 && t.clock != nil {
		// The kernel's stamp of the bytes, never before an earlier read's
		// (events stay in order) nor before the response's headers or the
		// request (bytes cannot come before they were asked for: a stamp
		// that says so dated other bytes).
		t.last = latest(t.clock.Arrival(t.returned), prev, t.floor)
	}
	if err == io.EOF { //nolint:errorlint // io.EOF is returned unwrapped by contract
		t.eof = true
	}
	if n > 0 {
		if t.retry != nil {
			t.retry.write(p[:n])
		}
		t.bytes += int64(n)
		if t.wd != nil {
			t.wd.BytesAt(t.returned)
		}
		if t.limit > 0 && t.bytes > t.limit {
			return n, errBodyTooLarge
		}
	}
	return n, err
}

// latest is the latest of times, zero ones ignored.
func latest(times ...time.Time) time.Time {
	var t time.Time
	for _, x := range times {
		if x.After(t) {
			t = x
		}
	}
	return t
}
