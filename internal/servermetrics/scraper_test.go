package servermetrics

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBaselineAndFinalGiveExactRunDeltas(t *testing.T) {
	ep := newEndpoint(t, fixture(t, "vllm_baseline.txt"))
	var samples atomic.Int64
	s, err := New(Config{URL: ep.url(), Interval: time.Hour, OnScrape: func(Sample) { samples.Add(1) }})
	require.NoError(t, err)
	s.Start()
	ep.set(fixture(t, "vllm_final.txt"), 200, "")
	s.Stop()
	s.Stop()
	v := s.View(nil)
	assert.Empty(t, v.Missing)
	assert.Empty(t, v.Warnings)
	assert.Equal(t, EngineVLLM, v.Engine)
	assert.Equal(t, 2, v.Scrapes, "baseline and final, whatever the cadence")
	assert.Equal(t, int64(2), samples.Load())
	require.NotNil(t, v.Run)
	assert.InDelta(t, 6, v.Run.Counters[RequestsFinished], 1e-9)
	assert.InDelta(t, 1000, v.Run.Counters[PromptTokens], 1e-9)
	assert.Equal(t, "vllm:request_success_total", v.Sources[RequestsFinished])
	assert.Positive(t, v.ScrapeLatency.MaxMS)
}

func TestScrapesEveryIntervalOnItsOwnGoroutine(t *testing.T) {
	ep := newEndpoint(t, fixture(t, "vllm_final.txt"))
	got := make(chan Sample, 100)
	s, err := New(Config{URL: ep.url(), Interval: 50 * time.Millisecond, OnScrape: func(x Sample) { got <- x }})
	require.NoError(t, err)
	s.Start()
	for range 4 {
		select {
		case x := <-got:
			assert.InDelta(t, 5, x.Gauges[RequestsWaiting], 1e-9)
			assert.Equal(t, EngineVLLM, x.Engine)
		case <-time.After(5 * time.Second):
			t.Fatal("no scrape")
		}
	}
	s.Stop()
	v := s.View([]Span{{Name: "all", From: time.Now().Add(-time.Hour), To: time.Now()}})
	assert.GreaterOrEqual(t, v.Scrapes, 5)
	require.Len(t, v.Stages, 1)
	assert.Equal(t, v.Scrapes, v.Stages[0].Scrapes)
}

func TestHeadersAreSentAndNeverShown(t *testing.T) {
	ep := newEndpoint(t, []byte("unauthorized"))
	ep.set([]byte("unauthorized"), http.StatusUnauthorized, "text/plain")
	w := &warnings{}
	const secret = "Bearer sk-very-secret-token"
	s, err := New(Config{URL: ep.url(), Headers: map[string]string{"Authorization": secret}, Interval: time.Hour, Warn: w.add})
	require.NoError(t, err)
	s.Start()
	s.Stop()
	assert.Equal(t, secret, ep.header.Get("Authorization"))
	v := s.View(nil)
	msgs := w.all()
	require.Len(t, msgs, 1, "one warning per kind, not one per scrape")
	assert.Contains(t, msgs[0], "HTTP 401")
	assert.Contains(t, msgs[0], "credentials")
	assert.Contains(t, v.Missing, "HTTP 401")
	for _, m := range append(msgs, v.Missing) {
		assert.NotContains(t, m, "sk-very-secret")
	}
}

func TestURLCredentialsAreNotShown(t *testing.T) {
	s, err := New(Config{URL: "http://admin:hunter22@127.0.0.1:1/metrics?token=abc123", Interval: time.Hour, Timeout: time.Second})
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:1/metrics?token=REDACTED", s.Endpoint())
	s.Start()
	s.Stop()
	v := s.View(nil)
	assert.Contains(t, v.Missing, "unreachable")
	for _, m := range append(v.Warnings, v.Missing) {
		assert.NotContains(t, m, "hunter22")
		assert.NotContains(t, m, "abc123")
	}
}

func TestBadConfigIsRefusedWithTheOptionNamed(t *testing.T) {
	for _, u := range []string{"", "localhost:8000/metrics", "ftp://x/metrics", "http://", "::bad"} {
		_, err := New(Config{URL: u})
		require.Error(t, err, u)
		assert.Contains(t, err.Error(), "serverMetrics url")
	}
	_, err := New(Config{URL: "http://x/metrics", Interval: time.Millisecond})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "serverMetrics interval")
}

func TestWrongURLWarnsOnceAndTheRecordSaysWhy(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there now
	w := &warnings{}
	s, err := New(Config{URL: "http://" + addr + "/metrics", Interval: 50 * time.Millisecond, Timeout: time.Second, Warn: w.add})
	require.NoError(t, err)
	s.Start()
	time.Sleep(200 * time.Millisecond)
	s.Stop()
	v := s.View(nil)
	assert.Len(t, w.all(), 1)
	assert.GreaterOrEqual(t, v.Failed, 3)
	assert.Contains(t, v.Missing, "no scrape succeeded")
	assert.Contains(t, v.Missing, "unreachable")
	assert.Nil(t, v.Run, "no view: nothing is reported as 0")
}

func TestHTMLInsteadOfMetrics(t *testing.T) {
	ep := newEndpoint(t, []byte("<!doctype html><title>Sign in</title>"))
	ep.set([]byte("<!doctype html><title>Sign in</title>"), 200, "text/html")
	s, err := New(Config{URL: ep.url(), Interval: time.Hour})
	require.NoError(t, err)
	s.Start()
	s.Stop()
	v := s.View(nil)
	assert.Contains(t, v.Missing, "HTML page")
}

func TestEndpointComingUpLateHasNoBaseline(t *testing.T) {
	ep := newEndpoint(t, nil)
	ep.set([]byte("not yet"), http.StatusServiceUnavailable, "text/plain")
	s, err := New(Config{URL: ep.url(), Interval: time.Hour})
	require.NoError(t, err)
	s.Start()
	ep.set(fixture(t, "vllm_final.txt"), 200, "text/plain")
	s.Stop()
	v := s.View(nil)
	assert.Empty(t, v.Missing)
	require.NotEmpty(t, v.Warnings)
	assert.Contains(t, strings.Join(v.Warnings, "\n"), "no baseline snapshot before the first request")
}

func TestSlowScrapeWarnsAndNeverOverlaps(t *testing.T) {
	var inFlight, overlap, hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if inFlight.Add(1) > 1 {
			overlap.Add(1)
		}
		defer inFlight.Add(-1)
		hits.Add(1)
		time.Sleep(120 * time.Millisecond)
		_, _ = w.Write([]byte("# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 1\n"))
	}))
	defer srv.Close()
	w := &warnings{}
	s, err := New(Config{URL: srv.URL, Models: ModelsOff, Interval: 50 * time.Millisecond, Warn: w.add})
	require.NoError(t, err)
	s.Start()
	time.Sleep(500 * time.Millisecond)
	overlapBeforeStop := overlap.Load() // Stop cancels the scrape in flight: the server may still be in it
	s.Stop()
	v := s.View(nil)
	assert.Zero(t, overlapBeforeStop)
	assert.Positive(t, v.Slow)
	require.Len(t, w.all(), 1)
	assert.Contains(t, w.all()[0], "longer than the interval")
	assert.GreaterOrEqual(t, v.ScrapeLatency.MeanMS, 100.0)
}

func TestStopCancelsAScrapeInFlight(t *testing.T) {
	release := make(chan struct{})
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 2 { // the first loop scrape hangs
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		_, _ = w.Write([]byte("# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 1\n"))
	}))
	defer srv.Close()
	defer close(release)
	s, err := New(Config{URL: srv.URL, Models: ModelsOff, Interval: 50 * time.Millisecond})
	require.NoError(t, err)
	s.Start()
	time.Sleep(150 * time.Millisecond)
	done := make(chan struct{})
	go func() { s.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("Stop waited for a hung scrape")
	}
	v := s.View(nil)
	assert.Equal(t, 2, v.Scrapes, "baseline and final")
	assert.Zero(t, v.Failed, "a scrape Stop cancelled is not the endpoint's failure")
}

func TestCounterResetWarnsOnce(t *testing.T) {
	ep := newEndpoint(t, []byte("# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total 500\n"))
	w := &warnings{}
	s, err := New(Config{URL: ep.url(), Interval: time.Hour, Warn: w.add})
	require.NoError(t, err)
	s.Start()
	ep.set([]byte("# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total 40\n"), 200, "")
	s.Stop()
	v := s.View(nil)
	require.Len(t, w.all(), 1)
	assert.Contains(t, w.all()[0], "prompt_tokens went down")
	assert.InDelta(t, 40, v.Run.Counters[PromptTokens], 1e-9)
}

func TestGarbageWarnsAndTheViewStays(t *testing.T) {
	body := append(fixture(t, "vllm_final.txt"), "garbage line here\n"...)
	ep := newEndpoint(t, body)
	w := &warnings{}
	s, err := New(Config{URL: ep.url(), Interval: time.Hour, Warn: w.add})
	require.NoError(t, err)
	s.Start()
	s.Stop()
	v := s.View(nil)
	assert.Empty(t, v.Missing)
	require.Len(t, w.all(), 1)
	assert.Contains(t, w.all()[0], "1 unparseable lines skipped")
	assert.InDelta(t, 5, v.Run.Gauges[RequestsWaiting].Max, 1e-9)
}

func TestMergeCountsAServerOnce(t *testing.T) {
	run := func(from, to time.Time, n float64) View {
		return View{Endpoint: "http://vllm:8000/metrics", Run: &Window{From: from, To: to, Counters: map[string]float64{RequestsFinished: n}}}
	}
	a := run(t0, t0.Add(60*time.Second), 100)
	b := run(t0.Add(time.Second), t0.Add(59*time.Second), 97)
	other := View{Endpoint: "http://other/metrics"}
	got := Merge([]View{b, other}, []View{a})
	require.Len(t, got, 2)
	assert.InDelta(t, 100, got[0].Run.Counters[RequestsFinished], 1e-9, "the widest window, not 197")
}

// After is the window from the scrape nearest a warm-up's end to the final
// snapshot: only what moved after it.
func TestAfterIsTheWindowFromAWarmupsEnd(t *testing.T) {
	ep := newEndpoint(t, fixture(t, "vllm_baseline.txt"))
	s, err := New(Config{URL: ep.url(), Interval: time.Hour})
	require.NoError(t, err)
	s.Start()
	time.Sleep(5 * time.Millisecond)
	warmupEnd := time.Now()
	ep.set(fixture(t, "vllm_final.txt"), 200, "")
	s.Stop()
	assert.Nil(t, s.After("after warm-up", time.Time{}), "no warm-up, no window")
	w := s.After("after warm-up", warmupEnd)
	require.NotNil(t, w)
	assert.Equal(t, "after warm-up", w.Name)
	assert.InDelta(t, 6, w.Counters[RequestsFinished], 1e-9, "from the baseline, the scrape before the warm-up's end")
	w = s.After("after warm-up", time.Now())
	require.NotNil(t, w)
	assert.InDelta(t, 0, w.Counters[RequestsFinished], 1e-9, "from the final snapshot: nothing after it")
}
