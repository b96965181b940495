// Package measure is a duration the client measured, or none. A figure the
// client could not measure (a TTFT of a call without output, a TPOT of a
// one-token answer) is unknown, never 0: Duration carries that in its type,
// where a negative time.Duration carried it by a convention each reader had
// to guard by hand, and a forgotten guard put -1 ns into a sketch. It also
// holds the one conversion to milliseconds every reader shares.
package measure

import (
	"encoding/json"
	"time"
)

// Duration is a measured duration, or none (the zero Duration).
type Duration struct {
	d     time.Duration
	known bool
}

// Of is d, measured.
func Of(d time.Duration) Duration { return Duration{d: d, known: true} }

// Between is from → to, measured when both moments happened (a zero
// time.Time is one that did not: no headers, no output).
func Between(from, to time.Time) Duration {
	if from.IsZero() || to.IsZero() {
		return Duration{}
	}
	return Of(to.Sub(from))
}

// Known says whether the duration was measured.
func (d Duration) Known() bool { return d.known }

// Get is the duration and whether it was measured.
func (d Duration) Get() (time.Duration, bool) { return d.d, d.known }

// Or is the duration, or fallback when it was not measured.
func (d Duration) Or(fallback time.Duration) time.Duration {
	if !d.known {
		return fallback
	}
	return d.d
}

// Plus is the duration shifted by x; one not measured stays so.
func (d Duration) Plus(x time.Duration) Duration {
	if !d.known {
		return d
	}
	return Of(d.d + x)
}

// MS is the duration in milliseconds and whether it was measured.
func (d Duration) MS() (float64, bool) {
	if !d.known {
		return 0, false
	}
	return MS(d.d), true
}

// String is the duration as time.Duration writes it, "none" when not
// measured: for logs and test messages.
func (d Duration) String() string {
	if !d.known {
		return "none"
	}
	return d.d.String()
}

// JS is the duration in a JS result: ms, nil (null) when not measured.
func (d Duration) JS() any {
	if !d.known {
		return nil
	}
	return MS(d.d)
}

// MarshalJSON writes the duration in ms, null when not measured.
func (d Duration) MarshalJSON() ([]byte, error) {
	if !d.known {
		return []byte("null"), nil
	}
	return json.Marshal(MS(d.d))
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
