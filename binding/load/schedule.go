package load

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"go.k6.io/k6/js/modules"

	"github.com/grafana/sobek"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/binding/runstate"
	"github.com/llmstream/xk6-llmstream/internal/dataset"
	"github.com/llmstream/xk6-llmstream/internal/schedule"
	"github.com/llmstream/xk6-llmstream/internal/trace"
)

// Schedule: the JS surface of internal/schedule (credits with due times,
// claimed by whichever VU of a pool is free) and of internal/trace (a
// production trace replayed through it). One schedule per process and
// options, in the shared store; each VU holds a view of it.

// scheduleList is every schedule of the process, for the report.
type ScheduleList struct {
	registry[*sharedSchedule]
}

// All is every schedule made so far.
func (l *ScheduleList) All() []*sharedSchedule { return l.all() }

// sharedSchedule is one schedule of the process and, for a trace, its rows.
type sharedSchedule struct {
	Name    string
	whole   *schedule.Schedule
	Tr      *trace.Trace
	prompts *trace.Prompts
	topt    traceOptions
	Reuse   any // the trace's predicted prefix reuse (float64), nil without prefix identity

	mu   sync.Mutex
	part *schedule.Schedule // this instance's share, once known
	// searched: a capacity search replays this trace on a schedule of its
	// own, so this one may never hand out a credit.
	searched bool
}

func (s *sharedSchedule) IsSearched() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.searched
}

// current is the schedule this instance runs (the whole one until the
// execution segment is known).
func (s *sharedSchedule) Current() *schedule.Schedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.part != nil {
		return s.part
	}
	return s.whole
}

type ScheduleFactory struct {
	VU      modules.VU
	Store   *dataset.Store
	Scope   k6env.VUScope
	Due     *k6env.DueSlot
	List    *ScheduleList
	Metrics *k6env.LLMMetrics // for the samples of dropped credits
	// Info records a trace's identity for the run record and its fingerprint.
	Info *runstate.RunInfoState
}

type synthOptions struct {
	Rate     float64       `opt:"rate"`
	Duration time.Duration `opt:"duration"`
	CV       float64       `opt:"cv,positive" want:"a number above 0 (1 is Poisson; leave it out for the default)"`
	Seed     uint64        `opt:"seed"`
	Name     string        `opt:"name"` // two schedules with equal options but different names stay apart
}

func (sf ScheduleFactory) Constant(opts sobek.Value) (*jsSchedule, error) {
	return sf.synthetic("constant", opts, func(o synthOptions) (*schedule.Schedule, error) {
		return schedule.Constant(schedule.Options{Rate: o.Rate, Duration: o.Duration})
	})
}

func (sf ScheduleFactory) Poisson(opts sobek.Value) (*jsSchedule, error) {
	return sf.synthetic("poisson", opts, func(o synthOptions) (*schedule.Schedule, error) {
		return schedule.Poisson(schedule.Options{Rate: o.Rate, Duration: o.Duration}, o.Seed)
	})
}

// defaultGammaCV makes Schedule.gamma clearly bursty when cv is not given,
// as Arrivals.bursty is.
const defaultGammaCV = 3

func (sf ScheduleFactory) Gamma(opts sobek.Value) (*jsSchedule, error) {
	return sf.synthetic("gamma", opts, func(o synthOptions) (*schedule.Schedule, error) {
		if o.CV == 0 {
			o.CV = defaultGammaCV
		}
		return schedule.Gamma(schedule.Options{Rate: o.Rate, Duration: o.Duration}, o.CV, o.Seed)
	})
}

func (sf ScheduleFactory) synthetic(kind string, opts sobek.Value, build func(synthOptions) (*schedule.Schedule, error)) (*jsSchedule, error) {
	where := "Schedule." + kind
	var o synthOptions
	if err := k6env.DecodeOptions(opts, where+" options", &o); err != nil {
		return nil, err
	}
	if o.CV != 0 && kind != "gamma" {
		return nil, fmt.Errorf("%s: cv is for Schedule.gamma", where)
	}
	ss, err := dataset.Shared(sf.Store, k6env.StoreKey("schedule", kind, o), func() (*sharedSchedule, error) {
		s, err := build(o)
		if err != nil {
			return nil, err
		}
		shared := &sharedSchedule{Name: kind, whole: s}
		sf.List.add(shared)
		return shared, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return &jsSchedule{s: ss, scope: sf.Scope, due: sf.Due, vu: sf.VU, metrics: sf.Metrics}, nil
}

// traceOptions are Schedule.trace's options.
type traceOptions struct {
	trace.Options
	RateScale   float64       `opt:"rateScale,positive" want:"a number above 0 such as 2 (twice as fast as recorded)"`
	Loop        bool          `opt:"loop"`        // start again after the last row…
	LoopFor     time.Duration `opt:"loopFor"`     // …until this long
	Seed        uint64        `opt:"seed"`        // of the prompt text
	Tokenizer   string        `opt:"tokenizer"`   // counts the prompts' tokens (the server's, ideally)
	ExactOutput bool          `opt:"exactOutput"` // also min_tokens and ignore_eos (vLLM, llm-sim)
	FromDisk    bool          `opt:"fromDisk"`    // streamed from the disk, without k6's copy (no archive carries it)
}

// traceSummary is the line a trace replay prints when read and the report
// repeats: what will be sent, at what mean rate.
func TraceSummary(s *sharedSchedule) string {
	tr := s.Tr
	scale := s.topt.RateScale
	if scale == 0 {
		scale = 1
	}
	// Said when the trace is read, before anyone knows whether a Schedule or
	// a capacity search will replay it (a search sets its own speed per level).
	line := fmt.Sprintf("trace %s (%s): %d requests over %.1f s (mean %.2f req/s as recorded); next() replays it at %gx: mean %.2f req/s", tr.Name, tr.Format,
		tr.Rows(), tr.Span(), tr.MeanRate(), scale, tr.MeanRate()*scale)
	if tr.Skipped > 0 {
		line += fmt.Sprintf("; %d failed requests (0 response tokens) left out", tr.Skipped)
	}
	if r, ok := s.Reuse.(float64); ok {
		line += fmt.Sprintf("; prefix reuse the trace predicts (infinite cache, %d-token blocks): %.1f%%", tr.BlockSize, 100*r)
	} else {
		line += "; no prefix identity in this format: every prompt is unique"
	}
	return line
}

// jsSchedule is what scripts hold: next() claims a credit, setRate()
// changes the rate, stats() and info() describe it.
type jsSchedule struct {
	s       *sharedSchedule
	scope   k6env.VUScope
	due     *k6env.DueSlot
	vu      modules.VU
	metrics *k6env.LLMMetrics
	split   bool
}

func (j *jsSchedule) schedule() (*schedule.Schedule, error) {
	if j.split {
		return j.s.Current(), nil
	}
	share, ok, err := j.scope.ExecutionShare()
	if err != nil {
		return nil, err
	}
	if !ok {
		return j.s.whole, nil
	}
	j.s.mu.Lock()
	if j.s.part == nil {
		j.s.part = j.s.whole.Part(share)
	}
	j.s.mu.Unlock()
	j.split = true
	return j.s.Current(), nil
}

// overPoll is how long next() holds a VU once the schedule is over.
const overPoll = 100 * time.Millisecond

// Next waits until this instance's next credit is due and returns it, or
// null when the schedule is over or the test is stopping. The VU's next
// call (chat, embed or rerank) is the credit's send: its result and samples carry the due time.
func (j *jsSchedule) Next() (map[string]any, error) {
	if j.vu.State() == nil {
		return nil, errors.New("Schedule next() can only be called in the VU context (the default function), not in init")
	}
	s, err := j.schedule()
	if err != nil {
		return nil, fmt.Errorf("schedule next(): %w", err)
	}
	ctx := j.vu.Context()
	c, err := s.Next(ctx)
	if errors.Is(err, schedule.ErrOver) {
		// Nothing more to send: hold the VU until the schedule's end (or a
		// moment), so a pool that outlives its schedule idles instead of
		// spinning through empty iterations.
		wait := max(time.Until(s.End()), overPoll)
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return nil, nil //nolint:nilnil // null: the schedule is over
	}
	if err != nil {
		// The test is stopping: what the schedule still owes is dropped.
		dropOwed(s, j.metrics, j.vu.State())
		return nil, nil //nolint:nilnil,nilerr // null tells the script to stop
	}
	j.due.At, j.due.From = c.Due, s
	out := map[string]any{
		"seq": c.Seq, "dueAt": float64(c.Due.UnixMicro()) / 1000, "offset": c.Offset.Seconds(),
		"lag": float64(c.Lag) / float64(time.Millisecond),
	}
	if j.s.Tr != nil {
		addTraceRow(j.s, c.Seq, out)
	}
	return out, nil
}

// addTraceRow adds credit seq's trace row to a credit: its lengths and the
// request built to them (s holds a trace).
func addTraceRow(s *sharedSchedule, seq uint64, out map[string]any) {
	tr := s.Tr
	row := int(seq % uint64(tr.Rows())) // #nosec G115 -- a row index, below tr.Rows()
	r := tr.Row(row)
	out["row"] = row
	out["inputTokens"] = r.Input
	out["outputTokens"] = r.Output
	maxTokens := max(int64(r.Output), 1) // a kept failure (0 tokens) asks for the least
	body := map[string]any{
		"messages":   []any{map[string]any{"role": "user", "content": s.prompts.Prompt(row, seq)}},
		"max_tokens": maxTokens,
	}
	if s.topt.ExactOutput {
		body["min_tokens"] = maxTokens
		body["ignore_eos"] = true
	}
	out["body"] = body
}

// SetRate changes the rate (credits/s; a trace's rateScale) from at seconds
// after the schedule's start (now when omitted) and returns the offset it
// took effect at.
func (j *jsSchedule) SetRate(rate float64, at sobek.Value) (float64, error) {
	s, err := j.schedule()
	if err != nil {
		return 0, fmt.Errorf("schedule setRate(): %w", err)
	}
	var off time.Duration
	if at != nil && !sobek.IsUndefined(at) && !sobek.IsNull(at) {
		off = time.Duration(at.ToFloat() * float64(time.Second))
	}
	eff, err := s.SetRate(rate, off)
	if err != nil {
		return 0, fmt.Errorf("schedule setRate(): %w", err)
	}
	return eff.Seconds(), nil
}

// Stats says how the VUs kept up: claimed, late and dropped credits.
func (j *jsSchedule) Stats() map[string]any {
	s, err := j.schedule()
	if err != nil {
		s = j.s.whole
	}
	st := s.Stats()
	return map[string]any{
		"kind": st.Kind, "claimed": st.Claimed, "late": st.Late, "dropped": st.Dropped, "over": st.Over,
		"maxLagMs": float64(st.MaxLag) / float64(time.Millisecond), "meanLagMs": float64(st.MeanLag) / float64(time.Millisecond),
		"rate": s.Rate(st.Elapsed), "segment": st.Segment, "share": st.Share,
	}
}

// Info describes a trace replay (null for synthetic schedules).
func (j *jsSchedule) Info() map[string]any {
	tr := j.s.Tr
	if tr == nil {
		return nil
	}
	scale := j.s.topt.RateScale
	if scale == 0 {
		scale = 1
	}
	return map[string]any{
		"format": tr.Format, "rows": tr.Rows(), "skipped": tr.Skipped, "outside": tr.Outside, "turns": tr.Turns,
		"span": tr.Span() / scale, "meanRate": tr.MeanRate() * scale, "blockSize": tr.BlockSize,
		"prefixReuse": j.s.Reuse, "summary": TraceSummary(j.s),
	}
}
