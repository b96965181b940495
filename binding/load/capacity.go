package load

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/capacity"
	"github.com/llmstream/xk6-llmstream/internal/dataset"
	"github.com/llmstream/xk6-llmstream/internal/schedule"
)

// Capacity: the JS surface of internal/capacity. Capacity.search(options)
// builds one search per process (in the shared store) and the load it
// drives (capacity_load.go); a VU's next() waits
// for its turn at the search's current level (a schedule credit for the
// open model, a concurrency slot for the closed one) and tags the VU's
// samples with the window. Every finished call reaches the search from its
// record (binding/calls/fanout.go).

type CapacityFactory struct {
	VU    modules.VU
	Store *dataset.Store
	Scope k6env.VUScope
	Due   *k6env.DueSlot
	List  *SearchList
	// clientName is a Client's label, from the JS value a script passes
	// (false for anything else): the Client is the calls' type, above this
	// file's, so the module hands its reader down.
	ClientName func(v any) (string, bool)
}

// search is Capacity.search(options), in the init context.
func (cf CapacityFactory) Search(opts sobek.Value) (*jsSearch, error) {
	env := cf.VU.InitEnv()
	if env == nil {
		return nil, errors.New("Capacity.search must be called in the init context (outside the default function)")
	}
	var o capacity.Options
	if err := k6env.DecodeOptions(opts, "Capacity.search options", &o); err != nil {
		return nil, err
	}
	tr, err := searchTraceOf(o.Trace)
	if err != nil {
		return nil, fmt.Errorf("Capacity.search: %w", err)
	}
	cfg, err := capacity.ConfigOf(o, cf.clientLabel)
	if err != nil {
		return nil, fmt.Errorf("Capacity.search: %w", err)
	}
	cfg.Trace = searchTraceRecord(tr)
	gauge, err := env.Registry.NewMetric(capacity.Metric, metrics.Gauge)
	if err != nil {
		return nil, fmt.Errorf("Capacity.search: llm_capacity: %w", err)
	}
	key := k6env.StoreKey("capacity", o, cfg.Objectives, cfg.Trace, traceOptionsOf(tr))
	sh, err := dataset.Shared(cf.Store, key, func() (*sharedSearch, error) {
		return newSharedSearch(cfg, o.ArrivalSeed(), tr, gauge, cf.List)
	})
	if err != nil {
		return nil, fmt.Errorf("Capacity.search: %w", err)
	}
	return &jsSearch{sh: sh, vu: cf.VU, scope: cf.Scope, due: cf.Due}, nil
}

// clientLabel is a Client's name (its base URL when it has none), the label
// its calls' records carry.
func (cf CapacityFactory) clientLabel(v any, where string) (string, error) {
	if v == nil {
		return "", nil
	}
	name, ok := cf.ClientName(v)
	if !ok {
		return "", fmt.Errorf("%s must be a Client (new Client({...}))", where)
	}
	return name, nil
}

// jsSearch is what scripts hold: next() waits for the VU's turn at the
// current level, result() is the answer so far.
type jsSearch struct {
	sh    *sharedSearch
	vu    modules.VU
	scope k6env.VUScope
	due   *k6env.DueSlot
	held  bool // this VU holds a concurrency slot (released at its next next())
	ended bool // this VU was told the search is over (its later next() calls hold)
}

// MaxDuration is the longest the search can take ('360s'): the scenario's
// duration.
func (j *jsSearch) MaxDuration() string {
	return strconv.Itoa(int(j.sh.cfg.MaxDuration().Seconds())) + "s"
}

// Model is "rate" or "concurrency".
func (j *jsSearch) Model() string { return j.sh.cfg.Model }

// Next waits for this VU's turn at the search's current level and returns
// it ({level, window, phase…}), or null once the answer is known or the
// scenario's time is up. The first null comes at once, so a VU running its
// turns in a loop (one iteration per VU) returns and the scenario ends with
// the search; a VU calling next() again after its null (a constant-vus
// pool's next iteration) is held until the scenario's time is up instead of
// spinning.
func (j *jsSearch) Next() (map[string]any, error) {
	st := j.vu.State()
	if st == nil {
		return nil, errors.New("Capacity search next() can only be called in the VU context (the default function), not in init")
	}
	if err := j.sh.start(j.vu, j.scope); err != nil {
		return nil, fmt.Errorf("capacity search next(): %w", err)
	}
	if j.held {
		j.held = false
		j.sh.gate.Release()
	}
	ctx, cancel := context.WithCancel(j.vu.Context())
	defer cancel()
	stop := context.AfterFunc(j.sh.done, cancel)
	defer stop()
	for {
		step := j.sh.advance()
		j.push(st)
		if step.Done || ctx.Err() != nil || k6env.ScenarioOver(j.vu.Context()) {
			j.over()
			return nil, nil //nolint:nilnil // null: the search is over
		}
		if step.Draining {
			k6env.SleepCtx(ctx, tickEvery)
			continue
		}
		turn, ok := j.turn(ctx)
		if !ok {
			continue // the level changed or the search ended while waiting
		}
		step = j.sh.advance() // the window the turn was taken in
		tagWindow(st, step)
		turn["level"], turn["window"] = step.Level, step.Window
		return turn, nil
	}
}

// over returns at once the first time this VU learns the search is over,
// and later holds it until the scenario's time is up.
func (j *jsSearch) over() {
	if !j.ended {
		j.ended = true
		return
	}
	ctx := j.vu.Context()
	for ctx.Err() == nil && !k6env.ScenarioOver(ctx) {
		k6env.SleepCtx(ctx, tickEvery)
	}
}

// turn waits for a credit (open model) or a slot (closed model) and tells
// the search it was taken.
func (j *jsSearch) turn(ctx context.Context) (map[string]any, bool) {
	if s := j.sh.sched; s != nil {
		c, err := s.Next(ctx)
		if errors.Is(err, schedule.ErrOver) {
			k6env.SleepCtx(ctx, tickEvery) // past the horizon: nothing more to send
		}
		if err != nil {
			return nil, false
		}
		j.sh.search.Claim(c.Due, c.Lag)
		j.due.At, j.due.From = c.Due, nil // the search accounts for its own credits
		turn := map[string]any{"seq": c.Seq, "dueAt": float64(c.Due.UnixMicro()) / 1000,
			"lag": float64(c.Lag) / float64(time.Millisecond)}
		j.sh.traceTurn(c.Seq, turn)
		return turn, true
	}
	wait, cancel := context.WithTimeout(ctx, tickEvery)
	defer cancel()
	if !j.sh.gate.Acquire(wait) {
		return nil, false
	}
	j.held = true
	j.sh.search.Claim(time.Now(), 0)
	return map[string]any{}, true
}

// tagWindow tags the VU's next samples with the search's level and window,
// so thresholds and outputs see the staircase.
func tagWindow(st *lib.State, step capacity.Step) {
	st.Tags.Modify(func(tm *metrics.TagsAndMeta) {
		tm.SetTag("llm_level", strconv.FormatFloat(step.Level, 'g', 4, 64))
		tm.SetTag("llm_window", strconv.Itoa(step.Window))
	})
}

// push sends llm_capacity whenever a window was judged since the last push
// (the answer so far, so a test cut short still leaves one), and logs the
// answer once it is known.
func (j *jsSearch) push(st *lib.State) {
	judged := int64(j.sh.search.Advance(time.Now()).Judged)
	last := j.sh.pushed.Load()
	if judged <= last || !j.sh.pushed.CompareAndSwap(last, judged) {
		return
	}
	c := j.sh.search.Result()
	v := 0.0 // below min: less than the range's bottom
	if c.Capacity != nil {
		v = *c.Capacity
	}
	metrics.PushIfNotDone(j.vu.Context(), st.Samples, metrics.Sample{
		TimeSeries: metrics.TimeSeries{Metric: j.sh.gauge, Tags: st.Tags.GetCurrentValues().Tags},
		Time:       time.Now(), Value: v,
	})
	if c.Outcome != capacity.OutcomeUnfinished && j.sh.logged.CompareAndSwap(false, true) && st.Logger != nil {
		st.Logger.Infof("llmstream: %s", capacity.String(c))
	}
}

// Result is the answer so far: the run record's capacity section, without
// the windows' sketches.
func (j *jsSearch) Result() (any, error) {
	c := j.sh.search.Result()
	for i := range c.Windows {
		c.Windows[i].Sketches = nil
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("capacity search result(): %w", err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("capacity search result(): %w", err)
	}
	return out, nil
}
