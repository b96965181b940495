package module

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkChatCall is one whole call as a script makes it, per operation:
// JavaScript calls client.chat, the request goes through k6's HTTP client,
// a 150-token answer is read, the samples are emitted and the promise
// resolves with a result the script reads one field of. What it allocates
// per call is what a load generator collects garbage for at every call's
// start and end: at 1 000 streams those collections fall exactly when a wave
// of calls ends and the next begins, while other streams wait for their
// first token. The server (httptest, one pre-rendered body, one write) runs
// in the same process; its share is the same before and after a change.
//
//	go test -run '^$' -bench ChatCall -benchmem ./binding/module
func BenchmarkChatCall(b *testing.B) {
	for _, tc := range []struct {
		name, params string
		tokens       int
	}{
		{"defaults", "{}", 150},
		{"gaps", "{ gaps: true }", 150},
		{"short-answer", "{}", 2}, // what a call costs beyond its events
	} {
		b.Run(tc.name, func(b *testing.B) {
			body := answerBody(tc.tokens)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("X-Request-Id", "req-42")
				_, _ = w.Write(body)
			}))
			b.Cleanup(srv.Close)
			v := newTestVU(b, fmt.Sprintf(`const client = new llm.Client({ baseURL: %q, model: 'm' });`, srv.URL+"/v1"))
			b.Cleanup(v.closeIdle)
			v.run(`globalThis.call = () => client.chat({ messages: [{ role: 'user', content: 'Tell me about load testing.' }] }, ` +
				tc.params + `).then(r => { globalThis.ttft = r.ttft })`)
			const call = "call()"
			v.run(call) // the connection and the client's first-call work
			v.drain()
			b.ReportAllocs()
			b.ResetTimer()
			cpu := processCPU(b)
			for range b.N {
				v.run(call)
				v.drain()
			}
			b.ReportMetric(float64(processCPU(b)-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the process's CPU time (user and system) so far: on a
// shared machine a call's wall time is mostly other processes' turns, its
// CPU time much less so. It counts the in-process server too, the same
// share before and after a change.
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// answerBody is a whole streamed answer of n one-word tokens, as one buffer.
func answerBody(n int) []byte {
	var sb strings.Builder
	sb.WriteString(roleChunk)
	for i := range n {
		sb.WriteString(chunk(fmt.Sprintf(" word%d", i), ""))
	}
	sb.WriteString(chunk("", "stop"))
	sb.WriteString(usageChunk(12, n, 0))
	sb.WriteString("data: [DONE]\n\n")
	return []byte(sb.String())
}
