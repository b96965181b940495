package servermetrics

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/energy"
)

// Defaults.
const (
	DefaultInterval = time.Second
	DefaultTimeout  = 10 * time.Second
	// DefaultStartWait bounds how long Start holds the test for the
	// baseline snapshot: a healthy endpoint answers in milliseconds, and one
	// that does not must not delay the test by a scrape timeout. The
	// scrape goes on; a baseline that comes later is marked late.
	DefaultStartWait = 500 * time.Millisecond
	// DefaultQuietWait bounds the final snapshot of an endpoint whose latest
	// scrape went unanswered: the end of the test need not wait a full
	// timeout for an answer none of the scrapes before it got.
	DefaultQuietWait = time.Second
	// defaultMaxPoints bounds the history (a few KiB a point): 34 minutes at
	// 1 s before the resolution first halves.
	defaultMaxPoints = 2048
	minInterval      = 50 * time.Millisecond
)

// Config is one endpoint to scrape.
type Config struct {
	URL string
	// Source names the endpoint in the view and the k6 tag "source" (the
	// engine, a GPU exporter, a replica); "" = none.
	Source string
	// Headers are sent with every scrape (e.g. Authorization). Their values
	// never appear in a message or a View.
	Headers  map[string]string
	Interval time.Duration // between scrapes; 0 = DefaultInterval
	Timeout  time.Duration // of one scrape; 0 = DefaultTimeout
	// Model keeps only the series of this served model (model_name or
	// model label); empty = all of them, summed.
	Model string
	// Models is where the served models are listed (OpenAI's /v1/models):
	// "" = beside the metrics path, for an engine that serves one; ModelsOff
	// = not read.
	Models string
	// Warn gets one message per kind of problem (the first of its kind).
	Warn func(msg string)
	// OnScrape gets each successful scrape's gauges, on the scraper's
	// goroutine; it must not block.
	OnScrape func(Sample)
	// HTTPClient is the client scrapes use; nil = a client of its own, so
	// scrapes share no connection pool with the load.
	HTTPClient *http.Client
	// MaxPoints bounds the history; 0 = the default.
	MaxPoints int
	// StartWait and QuietWait: 0 = DefaultStartWait, DefaultQuietWait.
	StartWait time.Duration
	QuietWait time.Duration
}

// Sample is one scrape's gauges, timed at the scrape's midpoint, and what
// moved since the scrape before it.
type Sample struct {
	At      time.Time
	Engine  string
	Gauges  map[string]float64
	Other   map[string]float64 // an unknown exporter's gauges
	Latency time.Duration
	// Counters are the canonical counters' increases since the previous
	// successful scrape (resets handled); nil for the first scrape.
	Counters map[string]float64
	// Means are the histograms' exact means over the same interval
	// (Δsum/Δcount, seconds), for those that counted anything in it.
	Means map[string]float64
	// Run holds the run's figures (RunEnergyPerOutput, …) in the one sample
	// sent at the end of the test, which carries nothing else.
	Run map[string]float64
}

// RunSample is the end-of-test sample of a view: its run's energy per output
// token and per request; ok is false when it has neither.
func RunSample(v View, at time.Time) (Sample, bool) {
	if v.Run == nil || v.Run.Energy == nil {
		return Sample{}, false
	}
	run := map[string]float64{}
	if e := v.Run.Energy; e.JPerOutputToken != nil {
		run[RunEnergyPerOutput] = *e.JPerOutputToken
	}
	if e := v.Run.Energy; e.JPerRequest != nil {
		run[RunJPerRequest] = *e.JPerRequest
	}
	return Sample{At: at, Engine: v.Engine, Run: run}, len(run) > 0
}

// Span is a stage of the test, by its wall-clock boundaries.
type Span struct {
	Name     string
	From, To time.Time
}

// Scraper reads one endpoint on its own goroutine between Start and Stop.
type Scraper struct {
	cfg     Config
	url     *url.URL
	display string
	client  *http.Client

	startOnce, stopOnce sync.Once
	cancel              context.CancelFunc
	loopDone            chan struct{}

	mu  sync.Mutex
	acc *accumulator
	// meter integrates a GPU exporter's readings (nil until a scrape has
	// them); gpus are the GPUs it has seen, lost how many vanished.
	meter    *energy.Meter
	gpus     map[string]GPU
	gpuOrder []string
	lost     int
	config   map[string]string // the latest scrape's server configuration
	// modelsAt is where the model list is read (nil: not read);
	// modelsState whether it was (models.go); models the list, nil while
	// unknown.
	modelsAt    *url.URL
	modelsGiven bool
	modelsState int
	models      []ServedModel
	modelsWG    sync.WaitGroup
	// modelsCtx is the reads' own: Stop gives one in flight QuietWait
	// before it cancels it.
	modelsCtx    context.Context
	modelsCancel context.CancelFunc
	hist         history
	engine       string
	sources      map[string]string
	skipped      []string
	problems     map[string]string // kind -> first message
	order        []string          // kinds in the order they happened
	scrapes      int
	failed       int
	slow         int
	latSum       time.Duration
	latMax       time.Duration
	baseline     bool // the first successful scrape came from Start
	final        bool // the last one came from Stop
	stopped      bool // Stop was called: a later Start does nothing
	// startedAt is when Start was called; baselineLate how long after it
	// the baseline came, when Start had stopped waiting for it.
	startedAt    time.Time
	baselineLate time.Duration
	inflight     time.Time // when the scrape in flight began; zero when none is
	timedOut     bool      // the latest finished scrape timed out
	// finalBound is the final snapshot's timeout when it was shortened
	// (QuietWait); 0 when it had the full one.
	finalBound time.Duration
	// maxBody and maxModels bound a scrape's and the model list's body
	// (maxBodyBytes, maxModelsBytes); fields so that a test can reach
	// them without sending megabytes through the race detector.
	maxBody, maxModels int
}

// New checks cfg. The URL must be http(s) with a host.
func New(cfg Config) (*Scraper, error) {
	u, err := url.Parse(strings.TrimSpace(cfg.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := "(unparseable)"
		if err == nil {
			shown = displayURL(u)
		}
		return nil, fmt.Errorf("serverMetrics url %s: want http(s)://host[:port]/path", shown)
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Interval < minInterval {
		return nil, fmt.Errorf("serverMetrics interval %v: at least %v (each scrape parses the whole exposition)", cfg.Interval, minInterval)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxPoints <= 2 {
		cfg.MaxPoints = defaultMaxPoints
	}
	if cfg.StartWait <= 0 {
		cfg.StartWait = DefaultStartWait
	}
	if cfg.QuietWait <= 0 {
		cfg.QuietWait = DefaultQuietWait
	}
	mu, err := modelsURL(u, cfg.Models)
	if err != nil {
		return nil, err
	}
	s := &Scraper{
		cfg: cfg, url: u, display: displayURL(u), client: cfg.HTTPClient,
		acc: newAccumulator(), hist: history{max: cfg.MaxPoints}, problems: map[string]string{},
		modelsAt: mu, modelsGiven: strings.TrimSpace(cfg.Models) != "",
		maxBody: maxBodyBytes, maxModels: maxModelsBytes,
	}
	s.modelsCtx, s.modelsCancel = context.WithCancel(context.Background())
	if s.client == nil {
		s.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConns: 2, IdleConnTimeout: time.Minute}}
	}
	return s, nil
}

// Endpoint is the URL as records show it (no credentials).
func (s *Scraper) Endpoint() string { return s.display }

// Start takes the baseline snapshot and starts scraping every interval, on
// its own goroutine. It waits for the baseline (call it before the first
// request) at most StartWait: an endpoint that does not answer must not hold
// the test's start; its baseline, if it comes, is marked late.
func (s *Scraper) Start() {
	s.startOnce.Do(func() {
		s.mu.Lock()
		if s.stopped {
			s.mu.Unlock()
			return
		}
		ctx, cancel := context.WithCancel(context.Background())
		s.cancel, s.loopDone, s.startedAt = cancel, make(chan struct{}), time.Now()
		s.mu.Unlock()
		first := make(chan struct{})
		go s.run(ctx, first)
		t := time.NewTimer(s.cfg.StartWait)
		defer t.Stop()
		select {
		case <-first:
		case <-t.C:
		}
	})
}

// Stop ends the loop (cancelling a scrape in flight) and takes the final
// snapshot. Call it after the last request; calling it twice is harmless.
func (s *Scraper) Stop() {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.stopped = true
		cancel, done := s.cancel, s.loopDone
		timeout := s.finalTimeoutLocked(time.Now())
		s.mu.Unlock()
		if cancel != nil {
			cancel()
			<-done
		}
		s.scrape(context.Background(), timeout, false, true)
		s.endModels(timeout)
		if t, ok := s.client.Transport.(*http.Transport); ok && s.cfg.HTTPClient == nil {
			t.CloseIdleConnections()
		}
	})
}

// finalTimeoutLocked is the final snapshot's timeout: the scrape timeout,
// unless the endpoint has stopped answering (its latest scrape timed out,
// or the one in flight has waited past the bound): then the bound,
// QuietWait or twice the slowest answer it ever gave. A server that answers
// again still gives its final snapshot; one that does not costs the end of
// the test the bound, not a full timeout.
func (s *Scraper) finalTimeoutLocked(now time.Time) time.Duration {
	bound := min(max(s.cfg.QuietWait, 2*s.latMax), s.cfg.Timeout)
	hung := !s.inflight.IsZero() && now.Sub(s.inflight) > bound
	if (s.timedOut || hung) && bound < s.cfg.Timeout {
		s.finalBound = bound
		return bound
	}
	return s.cfg.Timeout
}

// run is the scraping goroutine: the baseline (first is closed when it
// has ended, however), then a scrape every interval.
func (s *Scraper) run(ctx context.Context, first chan<- struct{}) {
	defer close(s.loopDone)
	s.scrape(ctx, s.cfg.Timeout, true, false)
	close(first)
	s.readModelsAside()
	s.loop(ctx)
}

func (s *Scraper) loop(ctx context.Context) {
	t := time.NewTimer(s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		took := s.scrape(ctx, s.cfg.Timeout, false, false)
		if ctx.Err() != nil {
			return
		}
		s.readModelsAside()
		// Scrapes never overlap: a slow endpoint is read as fast as it
		// answers, and says so once (a scrape that timed out has said why).
		s.mu.Lock()
		timedOut := s.timedOut
		s.mu.Unlock()
		wait := s.cfg.Interval - took
		if wait <= 0 && !timedOut {
			s.mu.Lock()
			s.slow++
			s.mu.Unlock()
			s.problem(ProblemSlow, fmt.Sprintf("serverMetrics %s: a scrape took %v, longer than the interval %v; scraping as fast as it answers", s.display, took.Round(time.Millisecond), s.cfg.Interval))
		}
		t.Reset(max(wait, 0))
	}
}

// scrape reads the endpoint once, within timeout, and folds a success into
// the history.
func (s *Scraper) scrape(parent context.Context, timeout time.Duration, isBaseline, isFinal bool) time.Duration {
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	t0 := time.Now()
	s.mu.Lock()
	s.inflight = t0
	s.mu.Unlock()
	body, ct, err := s.fetch(ctx)
	took := time.Since(t0)
	s.mu.Lock()
	s.inflight = time.Time{}
	s.mu.Unlock()
	if errors.Is(parent.Err(), context.Canceled) {
		return took // Stop cancelled it: not the endpoint's fault
	}
	at := t0.Add(took / 2)
	var p parsed
	if err == nil {
		p, err = parseBody(body, ct)
		if err != nil {
			err = &scrapeError{kind: ProblemNotMetrics, msg: fmt.Sprintf("serverMetrics %s: %v", s.display, err)}
		}
	}
	timedOut := err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
	s.mu.Lock()
	s.timedOut = timedOut
	bound := s.finalBound
	s.mu.Unlock()
	if timedOut {
		msg := fmt.Sprintf("serverMetrics %s did not answer within %v (the scrape timeout)", s.display, timeout)
		if isFinal && bound > 0 {
			msg = fmt.Sprintf("serverMetrics %s did not answer the final snapshot within %v: the scrapes before it went unanswered, "+
				"so the end of the test did not wait its %v timeout", s.display, timeout, s.cfg.Timeout)
		}
		err = &scrapeError{kind: ProblemTimeout, msg: msg}
	}
	if err != nil {
		s.mu.Lock()
		s.failed++
		s.mu.Unlock()
		kind := ProblemUnreachable
		var se *scrapeError
		if errors.As(err, &se) {
			kind = se.kind
		}
		s.problem(kind, err.Error())
		return took
	}
	if p.skipped > 0 {
		s.problem(ProblemGarbage, fmt.Sprintf("serverMetrics %s: %d unparseable lines skipped (first: %s)", s.display, p.skipped, p.firstSkip))
	}
	snap := reduce(p.families, s.cfg.Model)
	if len(snap.bad.series) > 0 {
		s.problem(ProblemNonFinite, fmt.Sprintf("serverMetrics %s: not a finite number, left out of its figures (unknown, never a number made of it): %s",
			s.display, snap.bad.String()))
	}
	s.mu.Lock()
	pt, resets := s.acc.add(at, snap)
	first := len(s.hist.points) == 0
	var counters, means map[string]float64
	if !first {
		counters, means = since(s.hist.points[len(s.hist.points)-1], pt)
	}
	lost := s.meterLocked(at, snap)
	if !first && s.meter != nil {
		if j := s.meter.Energy(s.hist.points[len(s.hist.points)-1].at, at).Joules; finite(j) {
			counters[Energy] = j
		}
	}
	s.hist.add(pt)
	s.scrapes++
	s.latSum += took
	s.latMax = max(s.latMax, took)
	if first {
		s.baseline = isBaseline
	}
	if isBaseline && t0.Add(took).Sub(s.startedAt) > s.cfg.StartWait {
		s.baselineLate = t0.Add(took).Sub(s.startedAt)
	}
	s.final = isFinal
	s.engine = snap.engine
	if snap.config != nil {
		s.config = snap.config
	}
	s.sources = snap.sources
	s.skipped = snap.skipped
	s.mu.Unlock()
	if len(lost) > 0 {
		s.problem(ProblemGPULost, gpuLostMessage(s.display, lost))
	}
	if first && snap.engine == EngineUnknown {
		s.problem(ProblemUnknownEngine, fmt.Sprintf("serverMetrics %s: no family of a known engine (vLLM, SGLang, TGI, llama.cpp, TEI, llm-sim); "+
			"its gauges are listed as found, without queue, KV-cache or per-run request figures", s.display))
	}
	switch {
	case first || len(resets) == 0:
	case pt.restarted:
		s.problem(ProblemReset, fmt.Sprintf("serverMetrics %s: the server restarted (its process start time changed); %s counted from 0 again", s.display, strings.Join(resets, ", ")))
	default:
		s.problem(ProblemReset, fmt.Sprintf("serverMetrics %s: %s went down (the server restarted?); counted from 0 again", s.display, strings.Join(resets, ", ")))
	}
	if s.cfg.OnScrape != nil {
		s.cfg.OnScrape(Sample{
			At: at, Engine: snap.engine, Gauges: snap.gauges, Other: snap.other, Latency: took,
			Counters: counters, Means: means,
		})
	}
	return took
}

// meterLocked feeds a GPU exporter's readings to the energy meter and
// returns the GPUs that vanished since the scrape before.
func (s *Scraper) meterLocked(at time.Time, snap *snapshot) []string {
	if !snap.hasGPU && s.meter == nil {
		return nil
	}
	if s.meter == nil {
		s.meter, s.gpus = energy.NewMeter(), map[string]GPU{}
	}
	s.meter.Scrape(at, snap.gpus)
	for _, g := range snap.gpuInfo {
		if _, seen := s.gpus[g.ID]; !seen {
			s.gpuOrder = append(s.gpuOrder, g.ID)
		}
		s.gpus[g.ID] = g
	}
	lost := s.meter.Lost()
	out := lost[s.lost:]
	s.lost = len(lost)
	return out
}

// since is what moved from point a to point b: counter increases and the
// exact means of the histograms that counted something. Points hold
// reset-free running totals, so both are single subtractions.
func since(a, b *point) (counters, means map[string]float64) {
	counters = map[string]float64{}
	for k, v := range b.counters {
		if strings.HasPrefix(k, RequestsFinished+"/") || a.unknown[k] || b.unknown[k] {
			continue
		}
		counters[k] = v - a.counters[k]
	}
	for k, hb := range b.hists {
		d := hb
		if ha := a.hists[k]; ha != nil {
			var ok bool
			if d, ok = histDiff(hb, ha); !ok {
				continue
			}
		}
		if d.count > 0 && !d.sumUnknown {
			if means == nil {
				means = map[string]float64{}
			}
			means[k] = d.sum / d.count
		}
	}
	return counters, means
}

func (s *Scraper) problem(kind, msg string) {
	s.mu.Lock()
	_, seen := s.problems[kind]
	if !seen {
		s.problems[kind] = msg
		s.order = append(s.order, kind)
	}
	s.mu.Unlock()
	if !seen && s.cfg.Warn != nil {
		s.cfg.Warn(msg)
	}
}

// View is the server's side of a run, for the record: deltas over the run
// and per stage, gauge statistics, and why any of it is missing.
type View struct {
	Endpoint string `json:"endpoint"`
	// Source is the name the script gave the endpoint (or its host:port).
	Source string `json:"source,omitempty"`
	// SpreadOver counts the endpoints of the same client that each count
	// finished requests (replicas behind one baseURL) when there are more
	// than one: each saw only its share of the client's calls.
	SpreadOver int `json:"spread_over,omitempty"`
	// Client is the name of the client whose serverMetrics option named it.
	Client    string  `json:"client,omitempty"`
	Engine    string  `json:"engine,omitempty"`
	IntervalS float64 `json:"interval_s"`
	// Missing says why there is no view at all (no scrape succeeded).
	Missing string `json:"missing,omitempty"`
	// Partial says why the run window does not span the whole test (no
	// baseline before the first request, a late one, no final snapshot
	// after the last request); empty when it does. A count held against the
	// client's calls needs a window that spans them all.
	Partial  string   `json:"partial,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Scrapes succeeded, Failed did not, Slow took longer than the interval.
	Scrapes       int          `json:"scrapes"`
	Failed        int          `json:"failed,omitempty"`
	Slow          int          `json:"slow,omitempty"`
	ScrapeLatency LatencyStats `json:"scrape_latency"`
	// Sources names the family each quantity was read from.
	Sources map[string]string `json:"sources,omitempty"`
	Skipped []string          `json:"skipped,omitempty"`
	Run     *Window           `json:"run,omitempty"`
	// Measured is the run after the report's warm-up (the scrape nearest its
	// end to the final snapshot): the calls the client's figures cover, while
	// Run counts the warm-up's too. Nil without a warm-up.
	Measured *Window  `json:"measured,omitempty"`
	Stages   []Window `json:"stages,omitempty"`
	// CapacityWindows are the capacity search's windows, each from the end
	// of its warm-up to its end (named as the report's capacity rows):
	// the server's side of each level, its GPU energy included.
	CapacityWindows []Window `json:"capacity_windows,omitempty"`
	// GPUs are a GPU exporter's GPUs, in the order first seen; LostGPUs
	// those that vanished from it during the test.
	GPUs     []GPU    `json:"gpus,omitempty"`
	LostGPUs []string `json:"lost_gpus,omitempty"`
	// Config is the server's configuration as it exposes it (vLLM's
	// cache_config_info labels: block_size, num_gpu_blocks,
	// enable_prefix_caching, …), from the latest scrape.
	Config map[string]string `json:"config,omitempty"`
	// Models are the models the engine serves, with their context length
	// (its /v1/models); absent when it was not read.
	Models []ServedModel `json:"models,omitempty"`
}

// LatencyStats is how long scrapes took, in milliseconds.
type LatencyStats struct {
	MeanMS float64 `json:"mean_ms"`
	MaxMS  float64 `json:"max_ms"`
}

// Windows are the history's windows over spans (a capacity search's), each
// widened to the scrapes that bound it and with its energy; none before the
// first scrape.
func (s *Scraper) Windows(spans []Span) []Window {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.windowsLocked(spans)
}

// windowsLocked are the history's windows over spans, with their energy.
func (s *Scraper) windowsLocked(spans []Span) []Window {
	var out []Window
	for _, sp := range spans {
		if w, ok := s.hist.window(sp.Name, sp.From, sp.To); ok {
			s.addEnergyLocked(&w)
			out = append(out, w)
		}
	}
	return out
}

// After is the window from the scrape at or before from to the last one
// (View.Measured); nil before any scrape or when from is zero.
func (s *Scraper) After(name string, from time.Time) *Window {
	if from.IsZero() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w, ok := s.hist.window(name, from, time.Time{}); ok {
		s.addEnergyLocked(&w)
		return &w
	}
	return nil
}

// addEnergyLocked puts the GPUs' energy over w's scrapes on w.
func (s *Scraper) addEnergyLocked(w *Window) {
	if s.meter != nil {
		w.Energy = energyStats(s.meter, w.From, w.To)
	}
}

// View computes the run's and the stages' windows from what was scraped so
// far (call it after Stop for exact run deltas).
func (s *Scraper) View(stages []Span) View {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := View{
		Endpoint: s.display, Source: s.cfg.Source, Engine: s.engine, IntervalS: s.cfg.Interval.Seconds(),
		Scrapes: s.scrapes, Failed: s.failed, Slow: s.slow, Skipped: s.skipped,
	}
	if s.scrapes > 0 {
		v.ScrapeLatency = LatencyStats{
			MeanMS: float64(s.latSum.Microseconds()) / 1e3 / float64(s.scrapes),
			MaxMS:  float64(s.latMax.Microseconds()) / 1e3,
		}
	}
	if len(s.sources) > 0 {
		v.Sources = make(map[string]string, len(s.sources))
		for k, src := range s.sources {
			v.Sources[k] = src
		}
	}
	for _, k := range s.order {
		v.Warnings = append(v.Warnings, s.problems[k])
	}
	if len(s.hist.points) == 0 {
		v.Missing = "no scrape succeeded"
		if len(s.order) > 0 {
			v.Missing += ": " + s.problems[s.order[0]]
		}
		return v
	}
	var partial []string
	switch {
	case !s.baseline:
		partial = append(partial, "no baseline snapshot before the first request")
		v.Warnings = append(v.Warnings, "no baseline snapshot before the first request: deltas start at the first successful scrape, "+s.hist.points[0].at.UTC().Format(time.RFC3339))
	case s.baselineLate > 0:
		late := fmt.Sprintf("the baseline snapshot came %v after the test started", s.baselineLate.Round(time.Millisecond))
		partial = append(partial, late)
		v.Warnings = append(v.Warnings, fmt.Sprintf("%s (the start waits %v for it): deltas start there, so calls made before it are partly left out",
			late, s.cfg.StartWait))
	}
	if s.finalBound > 0 {
		v.Warnings = append(v.Warnings, fmt.Sprintf("the final snapshot was given %v, not the %v timeout: the endpoint's latest scrape had gone unanswered",
			s.finalBound, s.cfg.Timeout))
	}
	if !s.final {
		partial = append(partial, "no final snapshot after the last request")
		v.Warnings = append(v.Warnings, "no final snapshot after the last request: deltas end at the last successful scrape, "+s.hist.points[len(s.hist.points)-1].at.UTC().Format(time.RFC3339))
	}
	v.Partial = strings.Join(partial, "; ")
	if w, ok := s.hist.window("", time.Time{}, time.Time{}); ok {
		s.addEnergyLocked(&w)
		v.Run = &w
	}
	v.Stages = s.windowsLocked(stages)
	for _, id := range s.gpuOrder {
		v.GPUs = append(v.GPUs, s.gpus[id])
	}
	if len(s.config) > 0 {
		v.Config = make(map[string]string, len(s.config))
		for k, c := range s.config {
			v.Config[k] = c
		}
	}
	if s.meter != nil {
		v.LostGPUs = s.meter.Lost()
	}
	v.Models = append([]ServedModel(nil), s.models...)
	if len(v.Models) == 0 {
		v.Models = nil
	}
	return v
}
