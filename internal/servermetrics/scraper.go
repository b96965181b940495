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
)

// Defaults.
const (
	DefaultInterval = time.Second
	DefaultTimeout  = 10 * time.Second
	// defaultMaxPoints bounds the history (a few KiB a point): 34 minutes at
	// 1 s before the resolution first halves.
	defaultMaxPoints = 2048
	minInterval      = 50 * time.Millisecond
)

// Config is one endpoint to scrape.
type Config struct {
	URL string
	// Headers are sent with every scrape (e.g. Authorization). Their values
	// never appear in a message or a View.
	Headers  map[string]string
	Interval time.Duration // between scrapes; 0 = DefaultInterval
	Timeout  time.Duration // of one scrape; 0 = DefaultTimeout
	// Model keeps only the series of this served model (model_name or
	// model label); empty = all of them, summed.
	Model string
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

	mu       sync.Mutex
	acc      *accumulator
	hist     history
	engine   string
	sources  map[string]string
	skipped  []string
	problems map[string]string // kind -> first message
	order    []string          // kinds in the order they happened
	scrapes  int
	failed   int
	slow     int
	latSum   time.Duration
	latMax   time.Duration
	baseline bool // the first successful scrape came from Start
	final    bool // the last one came from Stop
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
	s := &Scraper{
		cfg: cfg, url: u, display: displayURL(u), client: cfg.HTTPClient,
		acc: newAccumulator(), hist: history{max: cfg.MaxPoints}, problems: map[string]string{},
	}
	if s.client == nil {
		s.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConns: 2, IdleConnTimeout: time.Minute}}
	}
	return s, nil
}

// Endpoint is the URL as records show it (no credentials).
func (s *Scraper) Endpoint() string { return s.display }

// Start takes the baseline snapshot (waiting for it, up to the timeout:
// call it before the first request) and starts scraping every interval.
func (s *Scraper) Start() {
	s.startOnce.Do(func() {
		s.scrape(context.Background(), true, false)
		ctx, cancel := context.WithCancel(context.Background())
		s.cancel = cancel
		s.loopDone = make(chan struct{})
		go s.loop(ctx)
	})
}

// Stop ends the loop (cancelling a scrape in flight) and takes the final
// snapshot. Call it after the last request; calling it twice is harmless.
func (s *Scraper) Stop() {
	s.stopOnce.Do(func() {
		if s.cancel != nil {
			s.cancel()
			<-s.loopDone
		}
		s.scrape(context.Background(), false, true)
		if t, ok := s.client.Transport.(*http.Transport); ok && s.cfg.HTTPClient == nil {
			t.CloseIdleConnections()
		}
	})
}

func (s *Scraper) loop(ctx context.Context) {
	defer close(s.loopDone)
	t := time.NewTimer(s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		took := s.scrape(ctx, false, false)
		if ctx.Err() != nil {
			return
		}
		// Scrapes never overlap: a slow endpoint is read as fast as it
		// answers, and says so once.
		wait := s.cfg.Interval - took
		if wait <= 0 {
			s.mu.Lock()
			s.slow++
			s.mu.Unlock()
			s.problem(ProblemSlow, fmt.Sprintf("serverMetrics %s: a scrape took %v, longer than the interval %v; scraping as fast as it answers", s.display, took.Round(time.Millisecond), s.cfg.Interval))
			wait = 0
		}
		t.Reset(wait)
	}
}

// scrape reads the endpoint once and folds a success into the history.
func (s *Scraper) scrape(parent context.Context, isBaseline, isFinal bool) time.Duration {
	ctx, cancel := context.WithTimeout(parent, s.cfg.Timeout)
	defer cancel()
	t0 := time.Now()
	body, ct, err := s.fetch(ctx)
	took := time.Since(t0)
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
	s.mu.Lock()
	pt, resets := s.acc.add(at, snap)
	first := len(s.hist.points) == 0
	var counters, means map[string]float64
	if !first {
		counters, means = since(s.hist.points[len(s.hist.points)-1], pt)
	}
	s.hist.add(pt)
	s.scrapes++
	s.latSum += took
	s.latMax = max(s.latMax, took)
	if first {
		s.baseline = isBaseline
	}
	s.final = isFinal
	s.engine = snap.engine
	s.sources = snap.sources
	s.skipped = snap.skipped
	s.mu.Unlock()
	if first && snap.engine == EngineUnknown {
		s.problem(ProblemUnknownEngine, fmt.Sprintf("serverMetrics %s: no family of a known engine (vLLM, SGLang, TGI, llama.cpp, TEI, llm-sim); "+
			"its gauges are listed as found, without queue, KV-cache or per-run request figures", s.display))
	}
	if len(resets) > 0 && !first {
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

// since is what moved from point a to point b: counter increases and the
// exact means of the histograms that counted something. Points hold
// reset-free running totals, so both are single subtractions.
func since(a, b *point) (counters, means map[string]float64) {
	counters = map[string]float64{}
	for k, v := range b.counters {
		if strings.HasPrefix(k, RequestsFinished+"/") {
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
		if d.count > 0 {
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
	// Client is the name of the client whose serverMetrics option named it.
	Client    string  `json:"client,omitempty"`
	Engine    string  `json:"engine,omitempty"`
	IntervalS float64 `json:"interval_s"`
	// Missing says why there is no view at all (no scrape succeeded).
	Missing  string   `json:"missing,omitempty"`
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
}

// LatencyStats is how long scrapes took, in milliseconds.
type LatencyStats struct {
	MeanMS float64 `json:"mean_ms"`
	MaxMS  float64 `json:"max_ms"`
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
		return &w
	}
	return nil
}

// View computes the run's and the stages' windows from what was scraped so
// far (call it after Stop for exact run deltas).
func (s *Scraper) View(stages []Span) View {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := View{
		Endpoint: s.display, Engine: s.engine, IntervalS: s.cfg.Interval.Seconds(),
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
	if !s.baseline {
		v.Warnings = append(v.Warnings, "no baseline snapshot before the first request: deltas start at the first successful scrape, "+s.hist.points[0].at.UTC().Format(time.RFC3339))
	}
	if !s.final {
		v.Warnings = append(v.Warnings, "no final snapshot after the last request: deltas end at the last successful scrape, "+s.hist.points[len(s.hist.points)-1].at.UTC().Format(time.RFC3339))
	}
	if w, ok := s.hist.window("", time.Time{}, time.Time{}); ok {
		v.Run = &w
	}
	for _, st := range stages {
		if w, ok := s.hist.window(st.Name, st.From, st.To); ok {
			v.Stages = append(v.Stages, w)
		}
	}
	return v
}
