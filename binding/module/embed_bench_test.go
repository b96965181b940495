package module

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/benchcpu"
)

// BenchmarkEmbedCall is one embeddings call per operation, the module's
// whole path (JavaScript calls client.embed, the exchange, the parse, the
// samples, the result the script reads) next to a bare Go client
// (net/http, the body read whole and decoded with encoding/json, as a
// hand-written load generator would) against the same in-process server,
// at batch 1 and 32, float and base64, 1024 dimensions. calls/s is
// 1e9 / ns/op; the ratio of the two clients in one run is the figure. On a
// shared machine wall time swings with the neighbours: cpu-ns/op is the
// process's CPU per call (the server's included, the same for both), and
// scripts/embed-cpu.sh runs each case in its own process.
//
//	go test -run '^$' -bench EmbedCall -benchmem ./binding/module
func BenchmarkEmbedCall(b *testing.B) {
	for _, batch := range []int{1, 32} {
		for _, enc := range []string{"float", "base64"} {
			body := embeddingsBody(batch, 1024, enc)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(body)
			}))
			inputs := make([]string, batch)
			for i := range inputs {
				inputs[i] = fmt.Sprintf("chunk %d of the quarterly report on load testing", i)
			}
			in, _ := json.Marshal(inputs)
			name := fmt.Sprintf("batch-%d/%s", batch, enc)
			b.Run("module/"+name, func(b *testing.B) {
				v := newTestVU(b, fmt.Sprintf(`const client = new llm.Client({ baseURL: %q, model: 'm' });`, srv.URL+"/v1"))
				b.Cleanup(v.closeIdle)
				v.run(fmt.Sprintf(`globalThis.call = () => client.embed({ input: %s, encodingFormat: %q })
					.then(r => { globalThis.count = r.count })`, in, enc))
				timeCalls(b, compiledIteration(b, v))
				if n := v.rt.VU.Runtime().Get("count"); n == nil || n.ToInteger() != int64(batch) {
					b.Fatalf("the last call counted %v vectors for %d inputs", n, batch)
				}
			})
			b.Run("bare/"+name, func(b *testing.B) {
				tr := &http.Transport{}
				b.Cleanup(tr.CloseIdleConnections)
				cl := &http.Client{Transport: tr}
				req := fmt.Sprintf(`{"model":"m","input":%s,"encoding_format":%q}`, in, enc)
				b.ReportAllocs()
				b.ResetTimer()
				cpu := benchcpu.Process(b)
				for range b.N {
					if n := bareEmbed(b, cl, srv.URL+"/v1/embeddings", req, enc); n != batch {
						b.Fatalf("%d vectors for %d inputs", n, batch)
					}
				}
				b.ReportMetric(float64(benchcpu.Process(b)-cpu)/float64(b.N), "cpu-ns/op")
			})
			srv.Close()
		}
	}
}

// bareEmbed is the bare client's call: POST, read, decode every vector.
func bareEmbed(b *testing.B, cl *http.Client, url, req, enc string) int {
	resp, err := cl.Post(url, "application/json", strings.NewReader(req))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		b.Fatal(err)
	}
	if enc == "base64" {
		var ans struct {
			Data []struct {
				Embedding string `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &ans); err != nil {
			b.Fatal(err)
		}
		for _, d := range ans.Data {
			if _, err := base64.StdEncoding.DecodeString(d.Embedding); err != nil {
				b.Fatal(err)
			}
		}
		return len(ans.Data)
	}
	var ans struct {
		Data []struct {
			Embedding []float64 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		b.Fatal(err)
	}
	return len(ans.Data)
}

// embeddingsBody is an OpenAI embeddings answer of n vectors of dim values.
func embeddingsBody(n, dim int, enc string) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"object":"list","data":[`)
	for i := range n {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"object":"embedding","index":%d,"embedding":`, i)
		if enc == "base64" {
			raw := make([]byte, 4*dim)
			for j := range dim {
				binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(float32(math.Sin(float64(i*dim+j)))))
			}
			buf.WriteString(`"` + base64.StdEncoding.EncodeToString(raw) + `"`)
		} else {
			buf.WriteByte('[')
			for j := range dim {
				if j > 0 {
					buf.WriteByte(',')
				}
				fmt.Fprintf(&buf, "%.8f", math.Sin(float64(i*dim+j)))
			}
			buf.WriteByte(']')
		}
		buf.WriteByte('}')
	}
	fmt.Fprintf(&buf, `],"model":"m","usage":{"prompt_tokens":%d,"total_tokens":%d}}`, 12*n, 12*n)
	return buf.Bytes()
}

// BenchmarkEmbedCallK6 is make bench-calls' embeddings case in one process:
// client.embed of one input against llm-sim's answer (1024 dimensions, the
// input's few words hashed into them, the rest zeros; chunked, with its
// Server-Timing and request id) beside k6's own http.post of the same
// request, the answer read whole (bench/k6-http-embed.js). cpu-ns/op of one
// over the other is the figure the per-call target is held to; the machine's
// load moves both.
//
//	go test -run '^$' -bench EmbedCallK6 -benchmem ./binding/module
func BenchmarkEmbedCallK6(b *testing.B) {
	body := simEmbeddingsBody()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Server-Timing", "queue;dur=0.026, prefill;dur=0.000, decode;dur=0.000, total;dur=0.000")
		w.Header().Set("X-Request-Id", "sim-7bd9b382-1")
		_, _ = w.Write(body[:len(body)/2]) // two writes: chunked, as llm-sim's answer
		_, _ = w.Write(body[len(body)/2:])
	}))
	b.Cleanup(srv.Close)
	const input = `'chunk 0 of the quarterly report on load testing'`
	for _, tc := range []struct{ name, script string }{
		{"module", `globalThis.call = () => client.embed({ input: ` + input + ` }).then(r => { globalThis.count = r.count })`},
		{"k6-http-post", `const body = JSON.stringify({ model: 'm', input: ` + input + ` });
			const params = { headers: { 'Content-Type': 'application/json' } };
			globalThis.call = () => { globalThis.count = http.post(%q, body, params).body.length > 0 ? 1 : 0 }`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			v, iterate := k6HTTPBeside(b, srv.URL, tc.script, "/v1/embeddings")
			timeCalls(b, iterate)
			if n := v.rt.VU.Runtime().Get("count"); n == nil || n.ToInteger() != 1 {
				b.Fatalf("the last call counted %v vectors", n)
			}
		})
	}
}

// simEmbeddingsBody is llm-sim's answer to that input: a unit vector of 1024
// values with one non-zero value per word, written as llm-sim writes it.
func simEmbeddingsBody() []byte {
	vec := make([]string, 1024)
	for i := range vec {
		vec[i] = "0"
	}
	for i, at := range []int{17, 101, 233, 388, 412, 577, 640, 811, 990} {
		vec[at] = []string{"0.33333334", "-0.33333334"}[i%2]
	}
	return fmt.Appendf(nil, `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[%s]}],`+
		`"model":"m","usage":{"prompt_tokens":9,"total_tokens":9}}`, strings.Join(vec, ","))
}
