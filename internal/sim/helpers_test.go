package sim

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer collects trace lines from handler goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) records(t *testing.T) []TraceRecord {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []TraceRecord
	for _, line := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if line == "" {
			continue
		}
		var r TraceRecord
		require.NoError(t, json.Unmarshal([]byte(line), &r), line)
		out = append(out, r)
	}
	return out
}

// recordsN waits for n trace records and returns them: a record is written
// as its handler returns, which may be after the client read the answer's
// last event.
func (s *syncBuffer) recordsN(t *testing.T, n int) []TraceRecord {
	t.Helper()
	var recs []TraceRecord
	require.Eventually(t, func() bool { recs = s.records(t); return len(recs) >= n }, 10*time.Second, 2*time.Millisecond, "%d trace records", n)
	require.Len(t, recs, n)
	return recs
}

// byArrival sorts records by arrival: the order they are written in is the
// order their handlers returned, which a client that read an answer's last
// event and sent the next request on a new connection does not fix.
func byArrival(recs []TraceRecord) []TraceRecord {
	slices.SortStableFunc(recs, func(a, b TraceRecord) int { return cmp.Compare(a.ArrivalNS, b.ArrivalNS) })
	return recs
}

type testSim struct {
	t      *testing.T
	srv    *Server
	ts     *httptest.Server
	client *http.Client
	trace  *syncBuffer
}

// fastModel is the "fast" profile with prefix cache, named name.
func fastModel(name string) ModelConfig {
	m, err := NewModel(name, "fast")
	if err != nil {
		panic(err)
	}
	return m
}

// newTestSim serves cfg's models (default: one fast model "m") on httptest.
func newTestSim(t *testing.T, models ...ModelConfig) *testSim {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Models = models
	if len(models) == 0 {
		cfg.Models = []ModelConfig{fastModel("m")}
	}
	tr := &syncBuffer{}
	cfg.TraceWriter = tr
	srv, err := New(cfg)
	require.NoError(t, err)
	ts := httptest.NewServer(srv.Handler())
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second}
	t.Cleanup(func() {
		client.CloseIdleConnections()
		ts.Close()
	})
	t.Cleanup(func() { _ = srv.Close() }) // runs first: ends streams in flight
	return &testSim{t: t, srv: srv, ts: ts, client: client, trace: tr}
}

func (s *testSim) post(path, body string, header ...string) *http.Response {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.ts.URL+path, strings.NewReader(body))
	require.NoError(s.t, err)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.client.Do(req)
	require.NoError(s.t, err)
	return resp
}

func (s *testSim) get(path string) (*http.Response, []byte) {
	s.t.Helper()
	resp, err := s.client.Get(s.ts.URL + path)
	require.NoError(s.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return resp, b
}

// sseEvent is one data event as the test client received it.
type sseEvent struct {
	data string
	at   time.Time
}

// readSSE reads data events until EOF or an error (returned).
func readSSE(r io.Reader) ([]sseEvent, error) {
	br := bufio.NewReader(r)
	var out []sseEvent
	for {
		line, err := br.ReadString('\n')
		if strings.HasPrefix(line, "data: ") && strings.HasSuffix(line, "\n") {
			out = append(out, sseEvent{data: strings.TrimSuffix(strings.TrimPrefix(line, "data: "), "\n"), at: time.Now()})
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// chunk is a chat.completion.chunk or text_completion chunk.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta *struct {
			Role    *string `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		Text         *string `json:"text"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
	} `json:"error"`
}

func parseChunk(t *testing.T, data string) (chunk, map[string]json.RawMessage) {
	t.Helper()
	var c chunk
	require.NoError(t, json.Unmarshal([]byte(data), &c), data)
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(data), &raw))
	return c, raw
}

func chatBody(content string, maxTokens int, extra string) string {
	b, _ := json.Marshal(content)
	s := `{"messages":[{"role":"user","content":` + string(b) + `}]`
	if maxTokens > 0 {
		s += `,"max_tokens":` + itoa(maxTokens)
	}
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

const streamUsage = `"stream":true,"stream_options":{"include_usage":true}`
