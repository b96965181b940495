package report

import (
	"time"
)

// A run whose every call failed has no latency to show, and every rule that
// reads one stays silent: the report then says that it failed, how, and the
// first message, so "nothing stands out" never stands for a red test.

// FirstError is one failed call's error: when the call ended, its class and
// its message (secrets already redacted by the client).
type FirstError struct {
	At      time.Time
	Type    string
	Message string
}

func firstErrorOf(o *Observation, errType string) FirstError {
	fe := FirstError{At: o.End, Type: errType}
	if o.Err != nil {
		fe.Message = o.Err.Message
	}
	return fe
}

// earlier is whichever of the two errors came first (a zero one never does).
func (e FirstError) earlier(o FirstError) FirstError {
	switch {
	case o.Type == "":
		return e
	case e.Type == "", o.At.Before(e.At):
		return o
	default:
		return e
	}
}

// maxErrorMessage bounds the message quoted in a finding's title.
const maxErrorMessage = 200
