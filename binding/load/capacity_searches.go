package load

import (
	"time"

	"github.com/llmstream/xk6-llmstream/internal/capacity"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// searchList is every capacity search of the process (capacity_load.go
// adds each): every finished call's record and the servers' waiting count
// reach each, and the report reads the first one's answer.
type SearchList struct {
	registry[*capacity.Search]
}

// finish gives a finished call to every search.
func (l *SearchList) Finish(rec *record.Call) {
	if l == nil {
		return
	}
	for _, s := range l.all() {
		s.Finish(rec)
	}
}

// waiting gives every search the servers' waiting count (serverMetrics).
func (l *SearchList) Waiting(at time.Time, n float64) {
	for _, s := range l.all() {
		s.Waiting(at, n)
	}
}

// account is the first search's answer, for the report (nil without one).
func (l *SearchList) Account() *runrecord.Capacity {
	if l == nil {
		return nil
	}
	s, ok := l.first()
	if !ok {
		return nil
	}
	return s.Result()
}

// Origin is the first search's start, which its windows' seconds count
// from (false without a started search).
func (l *SearchList) Origin() (time.Time, bool) {
	if l == nil {
		return time.Time{}, false
	}
	s, ok := l.first()
	if !ok {
		return time.Time{}, false
	}
	return s.Origin()
}
