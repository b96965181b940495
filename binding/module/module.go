// Package module is the k6 module k6/x/llmstream: the process-wide RootModule
// (one per k6 process, shared by every VU) and each VU's ModuleInstance, which
// assembles what the binding's packages below it need and lists the JS
// exports. The module root registers it with k6 (register.go).
//
// The binding's packages import one another one way only, top-down:
// module → reporting → calls → load → datasets → runstate → k6env, each
// importing only packages after it (docs/design.md draws them). A chat call
// runs binding/calls/chat.go (chat()) → plan.go (the call plan) → request.go
// (the HTTP request) → attempt.go (one HTTP attempt through k6) →
// transport.go (the VU's transports), and fans out from fanout.go →
// samples.go (its k6 samples) → binding/k6env/metrics.go (the metric
// registry). Retries, fallback, price, SLO and the lag warnings are
// internal/policy's.
package module

import (
	"crypto/x509"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"

	"github.com/llmstream/xk6-llmstream/binding/calls"
	"github.com/llmstream/xk6-llmstream/binding/datasets"
	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/binding/load"
	"github.com/llmstream/xk6-llmstream/binding/reporting"
	"github.com/llmstream/xk6-llmstream/binding/runstate"
	"github.com/llmstream/xk6-llmstream/internal/dataset"
	"github.com/llmstream/xk6-llmstream/internal/policy"
	"github.com/llmstream/xk6-llmstream/internal/selfwatch"
)

// ImportPath is the module's name in scripts. (k6/x/llm is taken by another
// public extension; two extensions with one path make k6 panic at start.)
const ImportPath = "k6/x/llmstream"

// Version is reported in run records.
const Version = "v0.1.0"

// RootModule is process-wide: one per k6 process, shared by every VU. State that
// must be shared (stream counts, datasets, report statistics) lives here.
type RootModule struct {
	active    atomic.Int64   // streams in flight in this process
	datasets  *dataset.Store // datasets and arrival processes, one per source + options
	report    *runstate.ReportState
	segment   k6env.SegmentState // the share of a split test this instance runs
	samplers  calls.GapSamplers  // llm_inter_token_gap samplers of gapSamples 'sampled'
	schedules load.ScheduleList  // every Schedule of the process, for the report
	searches  load.SearchList    // every capacity search of the process
	gates     load.GateList      // every precision gate of the process
	// lag is the process's own lag (scheduler latency, timer lateness),
	// watched while calls are in flight: one watcher for every VU.
	lag        *selfwatch.Watcher
	lagWarning *policy.LagWarning
	server     runstate.ServerState // the endpoints of serverMetrics options
	workers    *calls.Workers       // the goroutines calls run on, shared by every VU
	metrics    k6env.MetricTables   // the llm_* metrics by figure, shared by every VU

	mu         sync.Mutex
	transports []*calls.Transports // every VU's, to close idle connections

	certs sync.Once // the system's CA certificates, loaded before the test starts
}

// closeIdleConnections closes the idle connections of every VU's clients.
func (r *RootModule) closeIdleConnections() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.transports {
		t.CloseIdle()
	}
}

// The process's own lag is sampled every lagInterval and kept for lagHistory
// (a call's lag is the mean tick while it ran; policy.LagWarning judges it).
const (
	lagInterval = 50 * time.Millisecond
	lagHistory  = time.Minute
)

// New returns the root module.
func New() *RootModule {
	r := &RootModule{
		datasets: dataset.NewStore(), report: &runstate.ReportState{},
		lag: selfwatch.New(lagInterval, lagHistory), lagWarning: &policy.LagWarning{}, workers: calls.NewWorkers(),
	}
	r.server.OnWaiting = r.searches.Waiting // the server's queue, a sign of over-saturation
	return r
}

// ModuleInstance is one VU's view of the module.
type ModuleInstance struct {
	vu      modules.VU
	root    *RootModule
	scope   k6env.VUScope
	clients calls.ClientEnv
	due     *k6env.DueSlot
}

var (
	_ modules.Module   = (*RootModule)(nil)
	_ modules.Instance = (*ModuleInstance)(nil)
)

// NewModuleInstance runs in the init context of every VU: metrics are registered
// here, eagerly, so thresholds on them validate.
func (r *RootModule) NewModuleInstance(vu modules.VU) modules.Instance {
	env := vu.InitEnv()
	if env == nil {
		common.Throw(vu.Runtime(), errors.New("k6/x/llmstream must be imported in the init context"))
	}
	m, err := r.metrics.Get(env.Registry)
	if err != nil {
		common.Throw(vu.Runtime(), err)
	}
	if err := r.server.Init(vu); err != nil {
		common.Throw(vu.Runtime(), err)
	}
	r.report.Stop.Init(vu)
	r.report.Info.NoteFileSystems(env)
	r.certs.Do(loadSystemCerts)
	scope := k6env.VUScope{VU: vu, Seg: &r.segment}
	tr := &calls.Transports{}
	due := &k6env.DueSlot{}
	r.mu.Lock()
	r.transports = append(r.transports, tr)
	r.mu.Unlock()
	return &ModuleInstance{vu: vu, root: r, scope: scope, due: due, clients: calls.ClientEnv{
		VU: vu, Active: &r.active, Scope: scope, Sinks: calls.Sinks{Metrics: m, Report: r.report, Samplers: &r.samplers, LagWarning: r.lagWarning,
			Searches: &r.searches, Gates: &r.gates},
		Transports: tr, Lag: r.lag, Server: &r.server, Workers: r.workers, Due: due, Pace: &k6env.VUPace{},
	}}
}

// loadSystemCerts loads the system's CA certificates once, in the first init
// context, before any call. k6 loads them in the background as the test
// starts; parsing a few hundred PEM blocks there (and the collection the
// garbage triggers) fell on the first wave of calls, whose connects waited
// for a CPU and put that wait into their TTFT. Loading them here moves the
// work out of the measured calls; k6's own load then finds them ready, and
// HTTPS clients need them anyway.
func loadSystemCerts() {
	_, _ = x509.SystemCertPool() // an error is k6's to report, when it loads them too
}

// Exports lists the JS names of the module.
func (mi *ModuleInstance) Exports() modules.Exports {
	ds := datasets.DatasetFactory{VU: mi.vu, Store: mi.root.datasets, Scope: mi.scope, Info: &mi.root.report.Info}
	ar := load.ArrivalsFactory{Store: mi.root.datasets, Scope: mi.scope}
	sc := load.ScheduleFactory{VU: mi.vu, Store: mi.root.datasets, Scope: mi.scope, Due: mi.due, List: &mi.root.schedules,
		Metrics: mi.clients.Sinks.Metrics, Info: &mi.root.report.Info}
	rep := reporting.Reporter{VU: mi.vu, State: mi.root.report, Scope: mi.scope, Module: ImportPath, Version: Version, Server: &mi.root.server,
		Schedules: &mi.root.schedules, Searches: &mi.root.searches, Gates: &mi.root.gates}
	cp := load.CapacityFactory{VU: mi.vu, Store: mi.root.datasets, Scope: mi.scope, Due: mi.due, List: &mi.root.searches,
		ClientName: calls.ClientName}
	pg := load.PrecisionFactory{VU: mi.vu, Store: mi.root.datasets, Scope: mi.scope, List: &mi.root.gates}
	return modules.Exports{Named: map[string]any{
		"Client":       mi.newClient,
		"version":      Version,
		"report":       rep.Report,
		"collect":      rep.Collect,
		"loadBaseline": rep.LoadBaseline,
		"Dataset":      map[string]any{"synthetic": ds.Synthetic, "load": ds.Load, "chunks": ds.Chunks, "rerank": ds.Rerank},
		"Arrivals":     map[string]any{"poisson": ar.Poisson, "bursty": ar.Bursty},
		"Schedule": map[string]any{"constant": sc.Constant, "poisson": sc.Poisson, "gamma": sc.Gamma,
			"trace": sc.Trace},
		"Capacity":  map[string]any{"search": cp.Search},
		"Precision": map[string]any{"until": pg.Until},
	}}
}

// newClient is the JS constructor `new Client(options)`.
func (mi *ModuleInstance) newClient(call sobek.ConstructorCall) *sobek.Object {
	rt := mi.vu.Runtime()
	c, err := calls.NewClient(mi.clients, call.Argument(0))
	if err != nil {
		common.Throw(rt, err)
	}
	return c.Object(rt)
}
