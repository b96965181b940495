package load

import (
	"errors"
	"fmt"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/modules"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/dataset"
	"github.com/llmstream/xk6-llmstream/internal/precision"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// Precision: the JS surface of internal/precision. Precision.until(targets,
// options) builds one gate per process (in the shared store); a VU's next()
// is null once every target is known to its margin or the cap has passed,
// so a pool of VUs looping on it ends its scenario as a capacity search's
// does. Every finished call reaches the gate from its record (fanout.go).

// PrecisionFactory makes the process's gates.
type PrecisionFactory struct {
	VU    modules.VU
	Store *dataset.Store
	Scope k6env.VUScope
	List  *GateList
}

// precisionOptions are Precision.until's second argument.
type precisionOptions struct {
	// Cap is the longest the gate stays open ('10m'); 0: until the scenario ends.
	Cap time.Duration `opt:"cap,positive" want:"a duration above 0 like '10m'"`
}

// Until is Precision.until(targets, options), in the init context.
func (pf PrecisionFactory) Until(targets sobek.Value, opts sobek.Value) (*JSGate, error) {
	if pf.VU.InitEnv() == nil {
		return nil, errors.New("Precision.until must be called in the init context (outside the default function)")
	}
	var spec map[string]string
	if err := k6env.DecodeOptions(targets, "Precision.until targets", &spec); err != nil {
		return nil, err
	}
	ts, err := precision.ParseTargets("Precision.until targets", spec)
	if err != nil {
		return nil, err
	}
	var o precisionOptions
	if err := k6env.DecodeOptions(opts, "Precision.until options", &o); err != nil {
		return nil, err
	}
	g, err := dataset.Shared(pf.Store, k6env.StoreKey("precision", spec, o.Cap), func() (*precision.Gate, error) {
		g := precision.New(ts, o.Cap)
		pf.List.add(g)
		return g, nil
	})
	if err != nil {
		return nil, fmt.Errorf("Precision.until: %w", err)
	}
	return &JSGate{g: g, vu: pf.VU}, nil
}

// JSGate is what scripts hold.
type JSGate struct {
	g     *precision.Gate
	vu    modules.VU
	ended bool // this VU was told the gate is closed
}

// Next is {calls} while another call is wanted, null once the gate is
// closed. The first null comes at once (a VU looping on it returns and the
// scenario ends); a VU asking again after its null (a constant-vus pool's
// next iteration) is held until the scenario's time is up instead of
// spinning.
func (j *JSGate) Next() (map[string]any, error) {
	if j.vu.State() == nil {
		return nil, errors.New("precision gate next() can only be called in the VU context (the default function), not in init")
	}
	if j.g.Open(time.Now()) {
		return map[string]any{"open": true}, nil
	}
	if !j.ended {
		j.ended = true
		return nil, nil //nolint:nilnil // null: the gate is closed
	}
	ctx := j.vu.Context()
	for ctx.Err() == nil && !k6env.ScenarioOver(ctx) {
		k6env.SleepCtx(ctx, tickEvery)
	}
	return nil, nil //nolint:nilnil // null: the gate is closed
}

// Result is the gate so far, as the run record's precision section.
func (j *JSGate) Result() *runrecord.Precision { return j.g.Result().Record("") }

// GateList is every precision gate of the process: every finished call
// reaches each, and the report gives the first one's verdict.
type GateList struct {
	registry[*precision.Gate]
}

// Finish gives a finished call to every gate.
func (l *GateList) Finish(rec *record.Call) {
	if l == nil {
		return
	}
	now := time.Now()
	for _, g := range l.all() {
		g.Finish(rec, now)
	}
}

// Account is the first gate's verdict for the record, for the execution
// segment segment (nil without a gate).
func (l *GateList) Account(segment string) *runrecord.Precision {
	if l == nil {
		return nil
	}
	g, ok := l.first()
	if !ok {
		return nil
	}
	return g.Result().Record(segment)
}
