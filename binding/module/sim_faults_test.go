package module

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/sim"
)

// syncBuffer collects the simulator's trace lines from its goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Split(strings.TrimSpace(s.b.String()), "\n")
}

// startSim runs llm-sim in-process (profile demo: real prefill and decode
// timing) and returns its base URL and its ground-truth trace.
func startSim(t *testing.T, profile string) (string, *syncBuffer) {
	t.Helper()
	cfg := sim.DefaultConfig()
	m, err := sim.NewModel("sim", profile)
	require.NoError(t, err)
	cfg.Models = []sim.ModelConfig{m}
	trace := &syncBuffer{}
	cfg.TraceWriter = trace
	s, err := sim.New(cfg)
	require.NoError(t, err)
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = s.Close()
	})
	return srv.URL + "/v1", trace
}

// TestSimulatorFaults: llm-sim's per-request faults, each met by the client
// with its classified error type, every call counted once.
func TestSimulatorFaults(t *testing.T) {
	cases := []struct{ fault, options, want string }{
		{"disconnect@3", "", "network"},
		{"stall=3000@2", "timeouts: {idle: '300ms'}", "timeout_idle"},
		{"ttft=3000", "timeouts: {firstToken: '300ms'}", "timeout_first_token"},
		{"error@2", "", "stream_error"},
		{"status=503", "", "http_5xx"},
		{"status=429", "", "http_429"},
		{"malformed@2", "", "decode"},
		{"html", "", "decode"},
	}
	for _, tc := range cases {
		t.Run(tc.fault, func(t *testing.T) {
			noLeaks(t)
			base, _ := startSim(t, "fast")
			opts := fmt.Sprintf("baseURL: %q, model: 'sim'", base)
			if tc.options != "" {
				opts += ", " + tc.options
			}
			vu := newTestVU(t, `const client = new llm.Client({`+opts+`});`)
			vu.run(fmt.Sprintf(`globalThis.types = []; Promise.all([1,2].map(() => client.chat(
				{messages: [{role: 'user', content: 'hi'}], max_tokens: 8}, {headers: {'X-Sim-Fault': %q}})))
				.then(rs => rs.forEach(r => types.push(r.ok ? 'ok' : r.error.type)))`, tc.fault))
			require.Equal(t, []any{tc.want, tc.want}, vu.rt.VU.Runtime().Get("types").Export())
			got := vu.drain()
			require.Len(t, got["llm_requests"], 2)
			require.Len(t, got["llm_errors"], 2)
			vu.closeIdle()
		})
	}
}

// TestMeasurementsAgreeWithGroundTruth checks the client's clock against what
// the simulator says it did: the first token cannot be seen before the server
// sent it, and the request's id ties the two together.
func TestMeasurementsAgreeWithGroundTruth(t *testing.T) {
	t.Parallel()
	base, trace := startSim(t, "demo")
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, model: 'sim', gaps: true});`, base))
	start := time.Now()
	res := vu.chat(`{messages: [{role: 'user', content: 'tell me about queues'}], max_tokens: 12}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.EqualValues(t, 12, res["outputTokens"])
	require.Equal(t, "usage", res["tokenSource"])

	var truth struct {
		RequestID        string `json:"request_id"`
		ArrivalNS        int64  `json:"arrival_ns"`
		FirstTokenNS     int64  `json:"first_token_ns"`
		ChunkTokens      []int  `json:"chunk_tokens"`
		CompletionTokens int    `json:"completion_tokens"`
	}
	// The server writes its trace line once its handler returns, which may be
	// just after the client saw the end of the stream.
	var lines []string
	require.Eventually(t, func() bool {
		lines = trace.lines()
		return len(lines) == 1 && strings.HasSuffix(lines[0], "}")
	}, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &truth))
	require.Equal(t, truth.RequestID, res["requestId"])
	require.Equal(t, 12, truth.CompletionTokens)

	// t0 is before the server's arrival, and the client sees the first token
	// after the server wrote it: ttft ≥ server's (first token − arrival).
	serverTTFT := float64(truth.FirstTokenNS-truth.ArrivalNS) / 1e6
	require.GreaterOrEqual(t, res["ttft"], serverTTFT)
	// And no later than the whole call took from here.
	require.Less(t, res["ttft"], float64(time.Since(start))/1e6)
	// One gap between each two output-carrying chunks the server wrote.
	outputChunks := 0
	for _, n := range truth.ChunkTokens {
		if n > 0 {
			outputChunks++
		}
	}
	require.Len(t, res["gaps"], outputChunks-1)
}
