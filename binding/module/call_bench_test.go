package module

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/grafana/sobek"
	k6http "go.k6.io/k6/js/modules/k6/http"

	"github.com/llmstream/xk6-llmstream/internal/benchcpu"
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
// k6-http-post and k6-http-async are k6's own http.post and
// http.asyncRequest of the same request against the same server, the
// answer read whole (bench/k6-http.js): the level a call's cost is held
// to, measured in the same run (cpu-ns/op of one over the other is the
// figure; the machine's load moves both).
//
//	go test -run '^$' -bench ChatCall -benchmem ./binding/module
func BenchmarkChatCall(b *testing.B) {
	const chat = `globalThis.call = () => client.chat({ messages: [{ role: 'user', content: 'Tell me about load testing.' }] }, %s)
		.then(r => { globalThis.ttft = r.ttft })`
	// The body the module sends for that chat() with the client below.
	const post = `const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Tell me about load testing.' }],
		stream: true, stream_options: { include_usage: true } });
		const params = { headers: { 'Content-Type': 'application/json' } };
		const url = %q;
		`
	for _, tc := range []struct {
		name, script string
		tokens       int
	}{
		{"defaults", fmt.Sprintf(chat, "{}"), 150},
		{"gaps", fmt.Sprintf(chat, "{ gaps: true }"), 150},
		{"short-answer", fmt.Sprintf(chat, "{}"), 2}, // what a call costs beyond its events
		{"k6-http-post", post + `globalThis.call = () => { http.post(url, body, params) }`, 2},
		{"k6-http-async", post + `globalThis.call = async () => { await http.asyncRequest('POST', url, body, params) }`, 2},
	} {
		b.Run(tc.name, func(b *testing.B) {
			body := answerBody(tc.tokens)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("X-Request-Id", "req-42")
				_, _ = w.Write(body)
			}))
			b.Cleanup(srv.Close)
			_, iterate := k6HTTPBeside(b, srv.URL, tc.script, "/v1/chat/completions")
			timeCalls(b, iterate)
		})
	}
}

// k6HTTPBeside is a VU that has k6/http as http beside the module's client
// of baseURL/v1, and the compiled iteration of script on it; %q in the
// script is the URL of path, for k6/http's side.
func k6HTTPBeside(b *testing.B, baseURL, script, path string) (*testVU, func()) {
	b.Helper()
	v := newTestVUModules(b, New(), map[string]any{"k6/http": k6http.New()}, nil,
		fmt.Sprintf(`const http = require('k6/http'); const client = new llm.Client({ baseURL: %q, model: 'm' });`,
			baseURL+"/v1"))
	b.Cleanup(v.closeIdle)
	v.run(strings.ReplaceAll(script, "%q", fmt.Sprintf("%q", baseURL+path)))
	return v, compiledIteration(b, v)
}

// timeCalls times b.N calls of iterate, after one untimed (the connection
// and the client's first-call work), and reports the process's CPU per call.
func timeCalls(b *testing.B, iterate func()) {
	b.Helper()
	iterate()
	b.ReportAllocs()
	b.ResetTimer()
	cpu := benchcpu.Process(b)
	for range b.N {
		iterate()
	}
	b.ReportMetric(float64(benchcpu.Process(b)-cpu)/float64(b.N), "cpu-ns/op")
	b.StopTimer()
}

// compiledIteration is one k6 iteration of the script's global call(), as
// k6 runs it: the compiled function called (not v.run's compile of its
// source each time), its promises settled on the event loop, and the
// samples it pushed read, not kept, as k6's engine takes them.
func compiledIteration(b *testing.B, v *testVU) func() {
	b.Helper()
	call, ok := sobek.AssertFunction(v.rt.VU.Runtime().Get("call"))
	if !ok {
		b.Fatal("call is not a function")
	}
	return func() {
		if err := v.rt.EventLoop.Start(func() error { _, err := call(sobek.Undefined()); return err }); err != nil {
			b.Fatal(err)
		}
		v.rt.EventLoop.WaitOnRegistered()
		for len(v.samples) > 0 {
			<-v.samples
		}
	}
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
