package sim

import (
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFaults(t *testing.T) {
	f, err := ParseFaults("stall=2000@5, disconnect@10,error@3 ,malformed@2,status=503,headers_delay=300,ttft=1500,html,gateway=200")
	require.NoError(t, err)
	assert.Equal(t, []Stall{{After: 5, Dur: 2 * time.Second}}, f.Stalls)
	assert.Equal(t, 10, f.Disconnect)
	assert.Equal(t, 3, f.Error)
	assert.Equal(t, 2, f.Malformed)
	assert.Equal(t, 503, f.Status)
	assert.Equal(t, 300*time.Millisecond, f.HeadersDelay)
	assert.Equal(t, 1500*time.Millisecond, f.TTFT)
	assert.True(t, f.HTML)
	assert.Equal(t, 200*time.Millisecond, f.Gateway)
	assert.Equal(t, "stall=2000@5,disconnect@10,error@3,malformed@2,status=503,headers_delay=300,ttft=1500,html,gateway=200", f.String())

	// Defaults: stall after 1 token, the rest after 0.
	f, err = ParseFaults("stall=10,disconnect,error,malformed")
	require.NoError(t, err)
	assert.Equal(t, []Stall{{After: 1, Dur: 10 * time.Millisecond}}, f.Stalls)
	assert.Equal(t, 0, f.Disconnect)
	assert.Equal(t, 0, f.Error)
	assert.Equal(t, 0, f.Malformed)

	for _, none := range []string{"", "none", " none , "} {
		f, err := ParseFaults(none)
		require.NoError(t, err)
		assert.False(t, f.Any())
		assert.Equal(t, -1, f.Disconnect)
	}
	for _, bad := range []string{
		"explode", "stall", "stall=abc", "stall=-1@2", "stall=5@x", "stall=5@-1", "ttft=5@3",
		"disconnect=3", "status=200", "status=600", "status", "status=500@2", "html=1", "html@2",
		"gateway", "headers_delay=1e9",
	} {
		_, err := ParseFaults(bad)
		assert.Error(t, err, bad)
	}
}

func TestFaultDrawIsSeededAndProportional(t *testing.T) {
	d, err := newFaultDraw(map[string]float64{"status=503": 0.25, "stall=100@2": 0.5, "html": 0})
	require.NoError(t, err)
	draw := func(seed uint64) (statuses, stalls, htmls int) {
		rng := rand.New(rand.NewPCG(seed, 1))
		for range 4000 {
			f := d.draw(rng)
			if f.Status == 503 {
				statuses++
			}
			if len(f.Stalls) > 0 {
				stalls++
			}
			if f.HTML {
				htmls++
			}
		}
		return
	}
	s1, st1, h1 := draw(1)
	s2, st2, h2 := draw(1)
	assert.Equal(t, []int{s1, st1, h1}, []int{s2, st2, h2}, "same seed, same draws")
	assert.InDelta(t, 1000, s1, 150)
	assert.InDelta(t, 2000, st1, 150)
	assert.Equal(t, 0, h1)
}

// faultSim serves a model that decodes a token every 5 ms.
func faultSim(t *testing.T) *testSim {
	t.Helper()
	m := fastModel("m")
	m.DecodeBaseMs = 5
	return newTestSim(t, m)
}

func contentCount(t *testing.T, evs []sseEvent) int {
	t.Helper()
	n := 0
	for _, ev := range evs {
		if ev.data == "[DONE]" || !json.Valid([]byte(ev.data)) {
			continue
		}
		c, _ := parseChunk(t, ev.data)
		if len(c.Choices) == 1 && c.Choices[0].Delta != nil && c.Choices[0].Delta.Content != nil && *c.Choices[0].Delta.Content != "" {
			n++
		}
	}
	return n
}

func TestFaultStatusAndHTML(t *testing.T) {
	s := faultSim(t)
	for _, code := range []int{500, 503, 429, 400} {
		resp := s.post("/v1/chat/completions", chatBody("x", 3, `"stream":true`), FaultHeader, "status="+itoa(code))
		var e struct {
			Error struct{ Message, Type string } `json:"error"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
		resp.Body.Close()
		assert.Equal(t, code, resp.StatusCode)
		assert.Contains(t, e.Error.Message, "fault")
		if code == 429 {
			assert.Equal(t, "1", resp.Header.Get("Retry-After"))
		} else {
			assert.Empty(t, resp.Header.Get("Retry-After"))
		}
	}
	resp := s.post("/v1/chat/completions", chatBody("x", 3, `"stream":true`), FaultHeader, "html")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Contains(t, string(body), "<html>")

	outcomes := map[Outcome]int{}
	for _, r := range s.trace.records(t) {
		outcomes[r.Outcome]++
	}
	assert.Equal(t, map[Outcome]int{OutcomeStatus: 4, OutcomeHTML: 1}, outcomes)
}

func TestFaultDelays(t *testing.T) {
	s := faultSim(t)
	// headers_delay: nothing at all (not even headers) for 150 ms.
	start := time.Now()
	resp := s.post("/v1/chat/completions", chatBody("x", 2, `"stream":true`), FaultHeader, "headers_delay=150")
	assert.GreaterOrEqual(t, time.Since(start), 150*time.Millisecond)
	_, err := readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)

	// ttft: the first content arrives 200 ms late; the rest at the normal pace.
	start = time.Now()
	resp = s.post("/v1/chat/completions", chatBody("x", 3, `"stream":true`), FaultHeader, "ttft=200")
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 3, contentCount(t, evs))
	assert.GreaterOrEqual(t, evs[1].at.Sub(start), 200*time.Millisecond)

	// stall: a gap of at least 200 ms after the third token.
	resp = s.post("/v1/chat/completions", chatBody("x", 6, `"stream":true`), FaultHeader, "stall=200@3")
	evs, err = readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 6, contentCount(t, evs))
	assert.GreaterOrEqual(t, evs[4].at.Sub(evs[3].at), 200*time.Millisecond) // events: role, t1, t2, t3 | t4
	for _, r := range s.trace.records(t) {
		assert.Equal(t, OutcomeOK, r.Outcome, r.Fault)
	}
}

func TestFaultDisconnect(t *testing.T) {
	s := faultSim(t)
	resp := s.post("/v1/chat/completions", chatBody("x", 10, streamUsage), FaultHeader, "disconnect@3")
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	require.Error(t, err, "the body ends without its terminating chunk")
	assert.True(t, errors.Is(err, io.ErrUnexpectedEOF), err)
	assert.Equal(t, 3, contentCount(t, evs))
	for _, ev := range evs {
		assert.NotEqual(t, "[DONE]", ev.data)
	}
	// Non-stream: the connection drops before any answer.
	req, err := http.NewRequest(http.MethodPost, s.ts.URL+"/v1/chat/completions", strings.NewReader(chatBody("x", 5, "")))
	require.NoError(t, err)
	req.Header.Set(FaultHeader, "disconnect@2")
	_, err = s.client.Do(req) //nolint:bodyclose // there is no response
	require.Error(t, err)

	require.Eventually(t, func() bool { return len(s.trace.records(t)) == 2 }, 5*time.Second, 5*time.Millisecond)
	for _, r := range s.trace.records(t) {
		assert.Equal(t, OutcomeDisconnect, r.Outcome)
	}
	// The server goes on.
	resp = s.post("/v1/chat/completions", chatBody("x", 2, ""))
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestFaultErrorEvent(t *testing.T) {
	s := faultSim(t)
	resp := s.post("/v1/chat/completions", chatBody("x", 10, streamUsage), FaultHeader, "error@2")
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, 2, contentCount(t, evs))
	require.Len(t, evs, 1+2+2) // role, 2 tokens, error, [DONE]
	c, raw := parseChunk(t, evs[3].data)
	require.NotNil(t, c.Error)
	assert.NotContains(t, raw, "choices")
	assert.Equal(t, "server_error", c.Error.Type)
	assert.Equal(t, "[DONE]", evs[4].data)

	// Non-stream: a 500 with the error object.
	resp = s.post("/v1/chat/completions", chatBody("x", 10, ""), FaultHeader, "error@2")
	resp.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
}

func TestFaultMalformed(t *testing.T) {
	s := faultSim(t)
	resp := s.post("/v1/chat/completions", chatBody("x", 4, streamUsage), FaultHeader, "malformed@2")
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	var bad []int
	for i, ev := range evs {
		if ev.data != "[DONE]" && !json.Valid([]byte(ev.data)) {
			bad = append(bad, i)
		}
	}
	assert.Equal(t, []int{3}, bad, "one invalid line, right after the second token")
	assert.Equal(t, 4, contentCount(t, evs), "the stream goes on")
	assert.Equal(t, "[DONE]", evs[len(evs)-1].data)

	resp = s.post("/v1/chat/completions", chatBody("x", 4, ""), FaultHeader, "malformed@2")
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.False(t, json.Valid(b))
	for _, r := range s.trace.records(t) {
		assert.Equal(t, OutcomeMalformed, r.Outcome)
	}
}

func TestFaultGatewayBuffering(t *testing.T) {
	s := faultSim(t) // a token every 5 ms
	resp := s.post("/v1/chat/completions", chatBody("x", 40, `"stream":true`), FaultHeader, "gateway=100")
	evs, err := readSSE(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 40, contentCount(t, evs))
	_ = s.srv.Close()
	recs := s.trace.recordsN(t, 1)
	r := recs[0]
	// ~200 ms of output leaves in a few blocks, not 40 chunks: uniform blocks.
	blocks := map[int64]bool{}
	for _, ns := range r.ChunksNS {
		blocks[ns] = true
	}
	assert.GreaterOrEqual(t, len(blocks), 2)
	assert.LessOrEqual(t, len(blocks), 6, "flushed in blocks: %d distinct flush times", len(blocks))
	// The engine's own times are still one per step.
	emits := map[int64]bool{}
	for _, ns := range r.EmitNS {
		emits[ns] = true
	}
	assert.Greater(t, len(emits), 30)
	// The client sees a long gap between blocks.
	var maxGap time.Duration
	for i := 1; i < len(evs); i++ {
		maxGap = max(maxGap, evs[i].at.Sub(evs[i-1].at))
	}
	assert.GreaterOrEqual(t, maxGap, 50*time.Millisecond)
}

func TestConfiguredFaultsAndNone(t *testing.T) {
	m := fastModel("m")
	m.Faults = map[string]float64{"status=503": 1}
	s := newTestSim(t, m)
	resp := s.post("/v1/chat/completions", chatBody("x", 2, ""))
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	// A request's own header replaces the random draw; "none" means healthy.
	resp = s.post("/v1/chat/completions", chatBody("x", 2, ""), FaultHeader, "none")
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp = s.post("/v1/chat/completions", chatBody("x", 2, ""), FaultHeader, "status=500")
	resp.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	recs := s.trace.recordsN(t, 3)
	assert.Equal(t, "status=503", recs[0].Fault)
	assert.Empty(t, recs[1].Fault)
}
