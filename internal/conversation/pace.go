package conversation

import (
	"fmt"
	"math"
	"time"
)

// Pace is user-centric timing: Users users who together send Rate turns a
// second, each one a turn every Users/Rate seconds. It replaces think time:
// the pause is whatever is left of the user's interval once the answer is in.
type Pace struct {
	Users int
	Rate  float64
}

// Check says what is wrong with p, naming the option.
func (p Pace) Check() error {
	if p.Users < 1 {
		return fmt.Errorf("pace: users must be 1 or more, got %d", p.Users)
	}
	if !(p.Rate > 0) || math.IsInf(p.Rate, 0) {
		return fmt.Errorf("pace: rate (turns/s of all users together) must be above 0, got %v", p.Rate)
	}
	return nil
}

// Interval is one user's time between the sends of two turns.
func (p Pace) Interval() time.Duration {
	return time.Duration(float64(p.Users) / p.Rate * float64(time.Second))
}

// First is user's first send: the users are staggered one 1/Rate apart
// from anchor (the test's start), so the run starts as it goes on, a turn
// every 1/Rate, instead of every user at once.
func (p Pace) First(anchor time.Time, user int) time.Time {
	k := user % p.Users
	if k < 0 {
		k += p.Users
	}
	return anchor.Add(time.Duration(float64(k) / p.Rate * float64(time.Second)))
}

// Next is the send of the turn after one sent at sent, the answer in at
// now: an interval after the send, or now when the answer came later than
// that. A late answer sends the next turn at once and the interval counts
// from there: the user does not catch up with a burst.
func (p Pace) Next(sent, now time.Time) time.Time {
	if at := sent.Add(p.Interval()); at.After(now) {
		return at
	}
	return now
}
