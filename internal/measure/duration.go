// Package measure is a duration the client measured, or none. A figure the
// client could not measure (a TTFT of a call without output, a TPOT of a
// one-token answer) is unknown, never 0: Duration carries that in its type,
// where a negative time.Duration carried it by a convention each reader had
// to guard by hand, and a forgotten guard put -1 ns into a sketch. It also
// holds the one conversion to milliseconds every reader shares.
package measure

import (
	"encoding/json"
	"math"
	"time"
)

// Duration is a measured duration, or none (the zero Duration).
//
// It holds the duration with its sign bit flipped, so that it is 8 bytes
// like a time.Duration and its zero value is "not measured": a call's
// result carries eight of them, and a flag beside each would add 64 bytes
// to every call. The zero value stands for math.MinInt64 ns (292 years
// before), which no clock of a call can measure. No reader sees the
// encoding: every one goes through the methods.
type Duration struct{ flipped int64 }

// Of is d, measured.
func Of(d time.Duration) Duration { return Duration{flipped: int64(d) ^ math.MinInt64} }

// Between is from → to, measured when both moments happened (a zero
// time.Time is one that did not: no headers, no output).
func Between(from, to time.Time) Duration {
	if from.IsZero() || to.IsZero() {
		return Duration{}
	}
	return Of(to.Sub(from))
}

// Known says whether the duration was measured.
func (d Duration) Known() bool { return d.flipped != 0 }

// Get is the duration and whether it was measured (0 when it was not).
func (d Duration) Get() (time.Duration, bool) {
	if d.flipped == 0 {
		return 0, false
	}
	return time.Duration(d.flipped ^ math.MinInt64), true
}

// Or is the duration, or fallback when it was not measured.
func (d Duration) Or(fallback time.Duration) time.Duration {
	if v, ok := d.Get(); ok {
		return v
	}
	return fallback
}

// Plus is the duration shifted by x; one not measured stays so.
func (d Duration) Plus(x time.Duration) Duration {
	if v, ok := d.Get(); ok {
		return Of(v + x)
	}
	return d
}

// MS is the duration in milliseconds and whether it was measured.
func (d Duration) MS() (float64, bool) {
	v, ok := d.Get()
	if !ok {
		return 0, false
	}
	return MS(v), true
}

// String is the duration as time.Duration writes it, "none" when not
// measured: for logs and test messages.
func (d Duration) String() string {
	v, ok := d.Get()
	if !ok {
		return "none"
	}
	return v.String()
}

// JS is the duration in a JS result: ms, nil (null) when not measured.
func (d Duration) JS() any {
	v, ok := d.Get()
	if !ok {
		return nil
	}
	return MS(v)
}

// MarshalJSON writes the duration in ms, null when not measured.
func (d Duration) MarshalJSON() ([]byte, error) {
	v, ok := d.Get()
	if !ok {
		return []byte("null"), nil
	}
	return json.Marshal(MS(v))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var v *float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v == nil {
		*d = Duration{}
		return nil
	}
	*d = Of(time.Duration(*v * float64(time.Millisecond)))
	return nil
}

// MS is d in milliseconds: the one conversion of a duration to the unit
// the JS result, the k6 samples and the report share.
func MS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
