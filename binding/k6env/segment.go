package k6env

import (
	"fmt"
	"sync"

	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

// The execution segment: when a test is split across several k6 instances
// (`--execution-segment` and `--execution-segment-sequence`, or k6-operator's
// parallelism), each instance runs a share of it. Datasets and arrival
// processes are process-wide sequences, so they are split the way k6 splits
// its own iterations (see dataset.Share); the run record says which share it
// covered (binding/runstate/runinfo.go).

// segmentState is process-wide: every VU of an instance runs the same share,
// read from k6's options once.
type SegmentState struct {
	mu     sync.Mutex
	known  bool
	share  dataset.Share
	failed error
	warned map[string]bool   // warnings already logged, by key
	first  map[string]string // the first holder of each key (FirstHolder)
}

// vuScope is one VU's view of the split: k6's options come from its state,
// and the process-wide segment state is shared by every VU.
type VUScope struct {
	VU  modules.VU
	Seg *SegmentState
}

// executionShare returns the share of the test this instance runs. ok is
// false in the init context, where k6 has not consolidated its options yet:
// there the caller works on the whole test.
func (sc VUScope) ExecutionShare() (share dataset.Share, ok bool, err error) {
	s := sc.Seg
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known {
		return s.share, true, s.failed
	}
	st := sc.VU.State()
	if st == nil {
		return dataset.Share{}, false, nil
	}
	s.known = true
	s.share, s.failed = shareOf(st.Options)
	if s.failed == nil && !s.share.Full() && st.Options.ExecutionSegmentSequence == nil && st.Logger != nil {
		st.Logger.Warnf("llmstream: execution segment %s without --execution-segment-sequence: give every "+
			"instance the same sequence, or instances may draw the same dataset items and arrivals", s.share.Segment())
	}
	return s.share, true, s.failed
}

// instancePart returns this instance's part of a process-wide sequence:
// *cache once known, else split(share) as soon as k6 says which share this
// instance runs (cached), and whole() until then (the init context).
func InstancePart[T comparable](sc VUScope, cache *T, whole func() T, split func(dataset.Share) T) (T, error) {
	var zero T
	if *cache != zero {
		return *cache, nil
	}
	share, ok, err := sc.ExecutionShare()
	if err != nil {
		return zero, err
	}
	if !ok {
		return whole(), nil
	}
	*cache = split(share)
	return *cache, nil
}

// warnOnce logs a warning about the split once per process (every VU meets
// the same condition).
func (sc VUScope) WarnOnce(key, format string, args ...any) {
	st := sc.VU.State()
	if st == nil || st.Logger == nil {
		return
	}
	s := sc.Seg
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.warned[key] {
		return
	}
	if s.warned == nil {
		s.warned = map[string]bool{}
	}
	s.warned[key] = true
	st.Logger.Warnf(format, args...)
}

// FirstHolder records holder as the first of key, process-wide, and returns
// the first one recorded (holder itself on the first call): a dataset asks
// it which scenario drew from it first, to tell when two scenarios number
// their iterations over the same sequence.
func (sc VUScope) FirstHolder(key, holder string) string {
	s := sc.Seg
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.first[key]; ok {
		return f
	}
	if s.first == nil {
		s.first = map[string]string{}
	}
	s.first[key] = holder
	return holder
}

// shareOf stripes the segment exactly as k6's scheduler does
// (lib.NewExecutionTuple of the same two options).
func shareOf(o lib.Options) (dataset.Share, error) {
	et, err := lib.NewExecutionTuple(o.ExecutionSegment, o.ExecutionSegmentSequence)
	if err != nil {
		return dataset.Share{}, fmt.Errorf("execution segment: %w", err)
	}
	start, offsets, lcd := et.GetStripedOffsets()
	return dataset.NewShare(et.Segment.String(), et.Sequence.String(), start, offsets, lcd)
}
