// Package llmstream is the k6 extension k6/x/llmstream: a streaming LLM client
// whose per-event timing happens in Go, at byte arrival, and turns every answer
// into k6 metrics, plus dataset helpers and a report (docs/design.md follows one
// call through the files of this package).
//
// The package is a thin JS binding over k6-free engines in internal/. Its
// files use one another one way only, without a loop: docs/design.md lists
// them top-down, each using only the ones after it. A chat call runs
// chat.go (chat()) → plan.go (the call plan) → request.go (the HTTP
// request) → attempt.go (one HTTP attempt through k6) → transport.go (the
// VU's transports), and fans out from fanout.go → samples.go (its k6
// samples) → metrics.go (the metric registry). Retries, fallback, price, SLO
// and the lag warnings are internal/policy's.
package llmstream

import (
	"crypto/x509"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/js/modules"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
	"github.com/llmstream/xk6-llmstream/internal/policy"
	"github.com/llmstream/xk6-llmstream/internal/selfwatch"
)

// ImportPath is the module's name in scripts. (k6/x/llm is taken by another
// public extension; two extensions with one path make k6 panic at start.)
const ImportPath = "k6/x/llmstream"

// Version is reported in run records.
const Version = "v0.1.0"

// register runs when the package is imported: the module registers itself
// with k6 then, as every k6 extension does.
var _ = register()

func register() bool {
	modules.Register(ImportPath, New())
	return true
}

// RootModule is process-wide: one per k6 process, shared by every VU. State that
// must be shared (stream counts, datasets, report statistics) lives here.
type RootModule struct {
	active    atomic.Int64   // streams in flight in this process
	datasets  *dataset.Store // datasets and arrival processes, one per source + options
	report    *reportState
	segment   segmentState // the share of a split test this instance runs
	samplers  gapSamplers  // llm_inter_token_gap samplers of gapSamples 'sampled'
	schedules scheduleList // every Schedule of the process, for the report
	searches  searchList   // every capacity search of the process
	// lag is the process's own lag (scheduler latency, timer lateness),
	// watched while calls are in flight: one watcher for every VU.
	lag        *selfwatch.Watcher
	lagWarning *policy.LagWarning
	server     serverState  // the endpoints of serverMetrics options
	workers    *workers     // the goroutines calls run on, shared by every VU
	metrics    metricTables // the llm_* metrics by figure, shared by every VU

	mu         sync.Mutex
	transports []*transports // every VU's, to close idle connections

	certs sync.Once // the system's CA certificates, loaded before the test starts
}

// closeIdleConnections closes the idle connections of every VU's clients.
func (r *RootModule) closeIdleConnections() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.transports {
		t.closeIdle()
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
		datasets: dataset.NewStore(), report: &reportState{},
		lag: selfwatch.New(lagInterval, lagHistory), lagWarning: &policy.LagWarning{}, workers: newWorkers(),
	}
	r.server.onWaiting = r.searches.waiting // the server's queue, a sign of over-saturation
	return r
}

// ModuleInstance is one VU's view of the module.
type ModuleInstance struct {
	vu      modules.VU
	root    *RootModule
	scope   vuScope
	clients clientEnv
	due     *dueSlot
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
	m, err := r.metrics.get(env.Registry)
	if err != nil {
		common.Throw(vu.Runtime(), err)
	}
	if err := r.server.init(vu); err != nil {
		common.Throw(vu.Runtime(), err)
	}
	r.certs.Do(loadSystemCerts)
	scope := vuScope{vu: vu, seg: &r.segment}
	tr := &transports{}
	due := &dueSlot{}
	r.mu.Lock()
	r.transports = append(r.transports, tr)
	r.mu.Unlock()
	return &ModuleInstance{vu: vu, root: r, scope: scope, due: due, clients: clientEnv{
		vu: vu, active: &r.active, scope: scope, sinks: sinks{metrics: m, report: r.report, samplers: &r.samplers, lagWarning: r.lagWarning,
			searches: &r.searches},
		transports: tr, lag: r.lag, server: &r.server, workers: r.workers, due: due, pace: &vuPace{},
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
	ds := datasetFactory{vu: mi.vu, store: mi.root.datasets, scope: mi.scope, info: &mi.root.report.info}
	ar := arrivalsFactory{store: mi.root.datasets, scope: mi.scope}
	sc := scheduleFactory{vu: mi.vu, store: mi.root.datasets, scope: mi.scope, due: mi.due, list: &mi.root.schedules,
		metrics: mi.clients.sinks.metrics}
	rep := reporter{vu: mi.vu, state: mi.root.report, scope: mi.scope, module: ImportPath, version: Version, server: &mi.root.server,
		schedules: &mi.root.schedules, searches: &mi.root.searches}
	cp := capacityFactory{vu: mi.vu, store: mi.root.datasets, scope: mi.scope, due: mi.due, list: &mi.root.searches,
		clientName: clientName}
	return modules.Exports{Named: map[string]any{
		"Client":       mi.newClient,
		"version":      Version,
		"report":       rep.report,
		"collect":      rep.collect,
		"loadBaseline": rep.loadBaseline,
		"Dataset":      map[string]any{"synthetic": ds.synthetic, "load": ds.load, "chunks": ds.chunks, "rerank": ds.rerank},
		"Arrivals":     map[string]any{"poisson": ar.poisson, "bursty": ar.bursty},
		"Schedule": map[string]any{"constant": sc.constant, "poisson": sc.poisson, "gamma": sc.gamma,
			"trace": sc.trace},
		"Capacity": map[string]any{"search": cp.search},
	}}
}

// newClient is the JS constructor `new Client(options)`.
func (mi *ModuleInstance) newClient(call sobek.ConstructorCall) *sobek.Object {
	rt := mi.vu.Runtime()
	c, err := newClient(mi.clients, call.Argument(0))
	if err != nil {
		common.Throw(rt, err)
	}
	return rt.ToValue(c).ToObject(rt)
}
