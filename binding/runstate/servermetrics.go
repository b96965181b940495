package runstate

// The serverMetrics Client option: the binding of internal/servermetrics. One
// scraper per endpoint in the process, whatever number of VUs and clients
// name it; it starts with the test (k6's test-start event, so the baseline
// snapshot comes before setup() and the first call) and stops with it (the
// final snapshot after teardown()), and feeds the llm_server_* k6 metrics and
// the report's server view.

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib"
	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// k6's global event types (go.k6.io/k6/internal/event, which an extension
// cannot import; Subscribe takes them as plain numbers).
const (
	eventTestStart = 2
	eventTestEnd   = 3
	eventExit      = 6
)

// serverState is process-wide: the endpoints the script's clients name.
type ServerState struct {
	subscribe sync.Once
	events    bool        // k6 delivers test start and end
	noted     atomic.Bool // noteCall has nothing left to do

	mu        sync.Mutex
	watches   []*serverWatch
	byURL     map[string]*serverWatch
	started   bool // the test has started: a watch added now starts at once
	stopped   bool
	sampleOut chan<- metrics.SampleContainer
	// pushCtx ends when the watches stop: a VU's own context is no use, as
	// k6 cancels it when the VU's iteration or scenario ends.
	pushCtx    context.Context
	pushCancel context.CancelFunc
	logger     logrus.FieldLogger
	metrics    []*metrics.Metric // by index of servermetrics.Metrics
	tags       *metrics.TagSet
	// onWaiting gets the servers' waiting requests after every scrape that
	// read them: the sum of each endpoint's latest reading (the capacity
	// search's sign of a growing queue).
	OnWaiting   func(at time.Time, n float64)
	lastWaiting map[*serverWatch]float64
}

// serverWatch is one endpoint: its scraper and the options that made it.
type serverWatch struct {
	opts    config.ServerMetrics
	client  string // the name of the first client naming it, for the name tag
	scraper *servermetrics.Scraper
	once    sync.Once
}

// registerServerMetrics registers the llm_server_* metrics with k6 (every
// VU's init asks; the registry returns the same metric each time).
func registerServerMetrics(reg *metrics.Registry) ([]*metrics.Metric, error) {
	out := make([]*metrics.Metric, len(servermetrics.Metrics))
	for i, m := range servermetrics.Metrics {
		kind, vt := metrics.Trend, metrics.Default
		if m.Kind == servermetrics.KindCounter {
			kind = metrics.Counter
		}
		if m.Time {
			vt = metrics.Time
		}
		metric, err := reg.NewMetric(m.Name, kind, vt)
		if err != nil {
			return nil, fmt.Errorf("registering %s: %w", m.Name, err)
		}
		out[i] = metric
	}
	return out, nil
}

// init runs in every VU's init context: the metrics, the root tags, the
// logger and, once, the subscription to k6's test start and end.
func (s *ServerState) Init(vu modules.VU) error {
	env := vu.InitEnv()
	ms, err := registerServerMetrics(env.Registry)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.metrics == nil {
		s.metrics, s.tags, s.logger = ms, env.Registry.RootTagSet(), env.Logger
	}
	s.mu.Unlock()
	s.subscribe.Do(func() {
		ev := vu.Events().Global
		if ev == nil {
			return
		}
		s.events = true
		id, ch := ev.Subscribe(eventTestStart, eventTestEnd, eventExit)
		go func() {
			for e := range ch {
				switch e.Type {
				case eventTestStart:
					s.StartAll()
				case eventTestEnd:
					s.stopAll()
				case eventExit:
					s.stopAll()
					e.Done()
					ev.Unsubscribe(id)
					return
				}
				e.Done()
			}
		}()
	})
	return nil
}

// add is a client's serverMetrics option: the endpoint's watch, made by the
// first client that names it. The same url with other options is an error
// (one endpoint is read one way); newClient puts the option's name on it.
func (s *ServerState) Add(o config.ServerMetrics, clientName string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.byURL[o.URL]; w != nil {
		if !reflect.DeepEqual(w.opts, o) {
			return fmt.Errorf("serverMetrics %s is named again with other options: give every client naming it the same ones",
				w.scraper.Endpoint())
		}
		return nil
	}
	w := &serverWatch{opts: o, client: clientName}
	sc, err := servermetrics.New(servermetrics.Config{
		URL: o.URL, Source: o.Source, Headers: o.Headers, Interval: o.Interval, Timeout: o.Timeout, Model: o.Model, Models: o.Models,
		Warn:     s.warn,
		OnScrape: func(x servermetrics.Sample) { s.push(w, x) },
	})
	if err != nil {
		return err //nolint:wrapcheck // the caller names the option
	}
	w.scraper = sc
	if s.byURL == nil {
		s.byURL = map[string]*serverWatch{}
	}
	s.byURL[o.URL] = w
	s.watches = append(s.watches, w)
	if s.started && !s.stopped {
		go w.start() // a VU initialised during the test: its baseline cannot come first
	}
	return nil
}

func (w *serverWatch) start() { w.once.Do(w.scraper.Start) }

// startAll takes every endpoint's baseline, together, and starts scraping.
func (s *ServerState) StartAll() {
	s.mu.Lock()
	s.started = true
	ws := append([]*serverWatch(nil), s.watches...)
	s.mu.Unlock()
	eachAtOnce(ws, (*serverWatch).start)
}

// eachAtOnce runs f on every watch at once and waits for all: the
// endpoints' baselines (and final snapshots) are taken together, not one
// scrape timeout after another.
func eachAtOnce(ws []*serverWatch, f func(*serverWatch)) {
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(w)
		}()
	}
	wg.Wait()
}

// stopAll takes every endpoint's final snapshot (before k6 closes its sample
// channel: the test-end event waits for it), sends its samples, and stops
// pushing.
func (s *ServerState) stopAll() {
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	ws := append([]*serverWatch(nil), s.watches...)
	cancel := s.pushCancel
	s.mu.Unlock()
	if cancel != nil {
		// The final snapshots' samples still go to k6, which reads its
		// sample channel until the test-end event is done: without them its
		// llm_server_* counters missed what the servers finished after the
		// last scrape, and differed from the report's. A push blocked on a
		// full channel gives up after finalPushWait: it must not hold the
		// end of the test.
		t := time.AfterFunc(finalPushWait, cancel)
		defer t.Stop()
		defer cancel()
	}
	eachAtOnce(ws, func(w *serverWatch) { w.scraper.Stop() })
	s.pushRunFigures(ws)
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
}

// pushRunFigures sends each GPU exporter's run figures (J per output token
// and per request, llm_server_energy_per_*) once, after the final
// snapshots: a threshold on them gates on the run's own ratio.
func (s *ServerState) pushRunFigures(ws []*serverWatch) {
	views := make([]servermetrics.View, len(ws))
	for i, w := range ws {
		views[i] = w.scraper.View(nil)
		views[i].Client = w.client
	}
	servermetrics.AttributeEnergy(views)
	now := time.Now()
	for i, w := range ws {
		if x, ok := servermetrics.RunSample(views[i], now); ok {
			s.push(w, x)
		}
	}
}

// finalPushWait bounds how long the final snapshots' samples wait for room
// in k6's sample channel.
const finalPushWait = time.Second

// noteCall runs at every call: it keeps the first VU's sample channel (the
// process has one; background scrapes have no VU of their own) and the
// test's tags and, when
// k6 gave no test-start event, starts the watches at the first call (their
// baseline then comes after it, and the view says so).
func (s *ServerState) NoteCall(st *lib.State) {
	if s.noted.Load() {
		return
	}
	s.mu.Lock()
	if s.sampleOut == nil {
		s.sampleOut = st.Samples
		s.pushCtx, s.pushCancel = context.WithCancel(context.Background())
		if s.tags != nil {
			// The test's own tags (--tag testid=…, options.tags) belong on
			// every sample, as k6 puts them on its own.
			s.tags = s.tags.WithTagsFromMap(st.Options.RunTags)
		}
	}
	late := !s.events && !s.started && len(s.watches) > 0
	if late {
		s.started = true
	}
	ws := s.watches
	s.noted.Store(s.started || s.events)
	s.mu.Unlock()
	if late {
		for _, w := range ws {
			go w.start()
		}
	}
}

// push sends one scrape's llm_server_* samples, tagged with the engine and
// the client's name, at the scrape's midpoint.
func (s *ServerState) push(w *serverWatch, x servermetrics.Sample) {
	s.noteWaiting(w, x)
	s.mu.Lock()
	out, ctx, stopped := s.sampleOut, s.pushCtx, s.stopped
	ms, tags := s.metrics, s.tags
	s.mu.Unlock()
	if out == nil || stopped || ms == nil || ctx.Err() != nil {
		return // before the first call, or after the test: the view keeps it
	}
	tags = tags.With("engine", x.Engine)
	if src := w.opts.Source; src != "" {
		tags = tags.With("source", src)
	}
	if w.client != "" {
		tags = tags.With("name", w.client)
	}
	scraped := make(metrics.Samples, 0, len(ms))
	for i, m := range servermetrics.Metrics {
		v, ok := m.Value(x)
		if !ok {
			continue
		}
		scraped = append(scraped, metrics.Sample{
			TimeSeries: metrics.TimeSeries{Metric: ms[i], Tags: tags}, Time: x.At, Value: v,
		})
	}
	metrics.PushIfNotDone(ctx, out, scraped)
}

// noteWaiting gives onWaiting the servers' waiting count after a scrape
// that read this endpoint's.
func (s *ServerState) noteWaiting(w *serverWatch, x servermetrics.Sample) {
	n, ok := x.Gauges[servermetrics.RequestsWaiting]
	if !ok || s.OnWaiting == nil {
		return
	}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return
	}
	if s.lastWaiting == nil {
		s.lastWaiting = map[*serverWatch]float64{}
	}
	s.lastWaiting[w] = n
	total := 0.0
	for _, v := range s.lastWaiting {
		total += v
	}
	s.mu.Unlock()
	s.OnWaiting(x.At, total)
}

func (s *ServerState) warn(msg string) {
	s.mu.Lock()
	l := s.logger
	s.mu.Unlock()
	if l != nil {
		l.Warn(msg + " (the test goes on; the report says what is missing)")
	}
}

// views are the endpoints' server views, each with a window per stage, one
// per capacity window and, when the report leaves a warm-up out, one from
// its end (measuredFrom); a test that ended without k6's test-end event is
// stopped here first.
func (s *ServerState) Views(stages, capacity []servermetrics.Span, measuredFrom time.Time) []servermetrics.View {
	s.mu.Lock()
	ws := append([]*serverWatch(nil), s.watches...)
	s.mu.Unlock()
	if len(ws) == 0 {
		return nil
	}
	s.stopAll()
	out := make([]servermetrics.View, 0, len(ws))
	for _, w := range ws {
		v := w.scraper.View(stages)
		v.Measured = w.scraper.After("after warm-up", measuredFrom)
		v.CapacityWindows = w.scraper.Windows(capacity)
		v.Client = w.client
		out = append(out, v)
	}
	markSpread(out)
	servermetrics.AttributeEnergy(out)
	return out
}

// markSpread notes, on each view, how many endpoints of its client count
// finished requests when there are several (replicas): none of them alone
// can be held against the client's calls.
func markSpread(views []servermetrics.View) {
	counting := map[string]int{}
	counts := func(v servermetrics.View) bool {
		if v.Run == nil {
			return false
		}
		_, ok := v.Run.Counters[servermetrics.RequestsFinished]
		return ok
	}
	for _, v := range views {
		if counts(v) {
			counting[v.Client]++
		}
	}
	for i, v := range views {
		if n := counting[v.Client]; n > 1 && counts(v) {
			views[i].SpreadOver = n
		}
	}
}
