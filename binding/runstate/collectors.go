package runstate

// The report's side of every call: the process-wide intake that every VU's
// finished calls feed (binding/calls/fanout.go), with the options collect()
// set, and the baseline (loaded in the init context) behind the live
// llm_regression. binding/reporting/report.go renders what they gathered.

import (
	"errors"
	"reflect"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/policy"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// ReportState is process-wide: every VU's calls feed one intake, and one
// baseline (loaded in the init context) drives llm_regression everywhere.
type ReportState struct {
	once   sync.Once
	intake *report.Intake
	// opts is what collect() set; it must be known before the first call
	// (the intake is fed live, so calls cannot be left out afterwards).
	optsMu  sync.Mutex
	opts    report.Options
	optsSet bool

	mu           sync.RWMutex
	baseline     *runrecord.Record
	baselinePath string

	Info RunInfoState // how the run is made (runinfo.go)
	Stop StopState    // how the test stopped, when before its planned end (stop.go)
}

// Intake is the report's one entry, made with the options collect() set:
// every finished call's record and every finished job go to it, and it
// routes them to the report's sections.
func (s *ReportState) Intake() *report.Intake {
	s.once.Do(func() {
		s.optsMu.Lock()
		defer s.optsMu.Unlock()
		s.intake = report.NewIntake(s.opts)
	})
	return s.intake
}

func (s *ReportState) Baseline() (*runrecord.Record, string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.baseline, s.baselinePath
}

// regression says whether a call was slower than the baseline's P95 TTFT for
// its category (and client, when the baseline kept several apart) by more
// than policy's margin; known is false when the baseline has no such category.
func (s *ReportState) Regression(client, category string, ttft time.Duration) (slower, known bool) {
	base, _ := s.Baseline()
	if base == nil {
		return false, false
	}
	if category == "" {
		category = report.DefaultCategory
	}
	p95, ok := base.ClientP95(client, category, record.DistTTFT)
	if !ok {
		return false, false
	}
	return policy.SlowerThanBaseline(ttft, p95), true
}

// setBaseline keeps the baseline loadBaseline() read (the init context's).
func (s *ReportState) SetBaseline(rec *runrecord.Record, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.baseline, s.baselinePath = rec, path
}

// setOptions keeps collect()'s options: once, with the same options from
// every VU, and before the first call was collected.
func (s *ReportState) SetOptions(ro report.Options) error {
	s.optsMu.Lock()
	defer s.optsMu.Unlock()
	if s.optsSet && !reflect.DeepEqual(s.opts, ro) {
		return errors.New("collect() was already called with other options: call it once, at the top level of the script")
	}
	if s.intake != nil && !s.optsSet {
		return errors.New("collect() came after calls were collected: call it at the top level of the script")
	}
	s.opts, s.optsSet = ro, true
	return nil
}
