package servermetrics

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hangingEndpoint answers its first `answered` scrapes and holds every
// later one until the scrape gives up.
func hangingEndpoint(t *testing.T, answered int64) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) > answered {
			<-r.Context().Done()
			return
		}
		_, _ = w.Write(fixture(t, "vllm_final.txt"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// returnsWithin runs f and fails the test when it has not returned within
// limit (the scrape timeout it must not wait for).
func returnsWithin(t *testing.T, limit time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s waited for the scrape timeout", what)
	}
}

// An endpoint that never answers holds neither the start of the test (the
// baseline is waited for StartWait only) nor its end (the final snapshot of
// an endpoint whose scrape went unanswered gets QuietWait), and says so once.
func TestAnEndpointThatNeverAnswersHoldsNeitherStartNorEnd(t *testing.T) {
	srv := hangingEndpoint(t, 0)
	w := &warnings{}
	const timeout = time.Minute
	s, err := New(Config{URL: srv.URL, Models: ModelsOff, Interval: time.Second, Timeout: timeout,
		StartWait: 50 * time.Millisecond, QuietWait: 100 * time.Millisecond, Warn: w.add})
	require.NoError(t, err)
	returnsWithin(t, timeout/2, "Start", s.Start)
	time.Sleep(300 * time.Millisecond) // the baseline scrape is still in flight
	returnsWithin(t, timeout/2, "Stop", s.Stop)
	v := s.View(nil)
	msgs := w.all()
	require.Len(t, msgs, 1, "one warning")
	assert.Contains(t, msgs[0], "did not answer the final snapshot within 100ms")
	assert.Contains(t, msgs[0], "1m0s timeout")
	assert.Contains(t, v.Missing, "did not answer")
	assert.Nil(t, v.Run)
}

// A scrape that timed out makes the final snapshot short as well: the
// endpoint that answered the baseline and then hung. The bound is QuietWait
// or twice the slowest answer, whichever is longer; on a busy machine the
// baseline's answer alone can take longer than half of QuietWait, so the
// test checks the bound against the answer it measured.
func TestTheFinalSnapshotIsShortAfterATimeout(t *testing.T) {
	srv := hangingEndpoint(t, 1)
	w := &warnings{}
	const timeout, quiet = 500 * time.Millisecond, 20 * time.Millisecond
	s, err := New(Config{URL: srv.URL, Models: ModelsOff, Interval: 50 * time.Millisecond, Timeout: timeout,
		QuietWait: quiet, Warn: w.add})
	require.NoError(t, err)
	s.Start()
	require.Eventually(t, func() bool { return len(w.all()) > 0 }, 10*time.Second, 10*time.Millisecond, "a scrape timed out")
	s.Stop()
	v := s.View(nil)
	require.Len(t, w.all(), 1)
	assert.Contains(t, w.all()[0], "did not answer within 500ms")
	require.NotNil(t, v.Run, "the baseline answered")
	m := regexp.MustCompile(`the final snapshot was given (\S+), not the 500ms timeout`).FindStringSubmatch(strings.Join(v.Warnings, "\n"))
	require.NotNil(t, m, "the final snapshot's bound is stated: %q", v.Warnings)
	given, err := time.ParseDuration(m[1])
	require.NoError(t, err)
	slowest := time.Duration(v.ScrapeLatency.MaxMS * float64(time.Millisecond))
	want := max(quiet, 2*slowest)
	require.Less(t, want, timeout, "the baseline answered in %v: too slow for this test to tell the bound from the timeout", slowest)
	assert.InDelta(t, want.Seconds(), given.Seconds(), 5e-6, "QuietWait %v or twice the slowest answer %v", quiet, slowest)
	assert.Contains(t, v.Partial, "no final snapshot")
}

// A healthy endpoint's final snapshot has the full timeout, and its run
// window spans the test.
func TestAHealthyEndpointsWindowSpansTheTest(t *testing.T) {
	ep := newEndpoint(t, fixture(t, "vllm_final.txt"))
	s, err := New(Config{URL: ep.url(), Interval: 50 * time.Millisecond})
	require.NoError(t, err)
	s.Start()
	time.Sleep(100 * time.Millisecond)
	s.Stop()
	v := s.View(nil)
	assert.Empty(t, v.Partial)
	assert.Empty(t, v.Warnings)
}

// A baseline that comes after Start stopped waiting is kept, and marked
// late: the run window does not span the calls made before it.
func TestALateBaselineIsMarked(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if n.Add(1) == 1 {
			time.Sleep(200 * time.Millisecond)
		}
		_, _ = w.Write(fixture(t, "vllm_final.txt"))
	}))
	defer srv.Close()
	s, err := New(Config{URL: srv.URL, Models: ModelsOff, Interval: time.Hour, StartWait: 20 * time.Millisecond})
	require.NoError(t, err)
	s.Start()
	require.Eventually(t, func() bool { return s.View(nil).Scrapes == 1 }, 10*time.Second, 10*time.Millisecond)
	s.Stop()
	v := s.View(nil)
	require.NotNil(t, v.Run)
	assert.Contains(t, v.Partial, "the baseline snapshot came")
	assert.Contains(t, strings.Join(v.Warnings, "\n"), "calls made before it are partly left out")
}

// Stop before Start: the final snapshot only, and a later Start does nothing.
func TestStartAfterStopDoesNothing(t *testing.T) {
	ep := newEndpoint(t, fixture(t, "vllm_final.txt"))
	s, err := New(Config{URL: ep.url(), Interval: 50 * time.Millisecond})
	require.NoError(t, err)
	s.Stop()
	s.Start()
	time.Sleep(50 * time.Millisecond)
	assert.Equal(t, 1, s.View(nil).Scrapes)
}
