package stream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tmaxmax/go-sse"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// Hot-path benchmarks: a whole pre-rendered response of benchEvents output
// events through NewCall → Consume → Finish, reported per event, because a
// long answer is thousands of events and the per-event cost is what limits how
// many streams one load generator can read. Two references run on the same
// body in the same process, so their ratios to the client are comparable:
// framing alone, ours (the floor under our SSE path) and go-sse's (what it
// replaced), and the loop a Go developer would write by hand (bufio lines +
// encoding/json), which is the bare client of bench/bareclient.

const benchEvents = 1000

// benchBody is one protocol's response of n output events.
type benchBody struct {
	name     string
	protocol string
	body     []byte
	events   int // framed events in the body, output or not
}

// openAIChatBody renders what llm-sim sends for max_tokens=n (byte for byte
// the same shape: role chunk, one chunk per token, finish chunk, usage chunk,
// [DONE]), so these figures line up with the loopback benchmark.
func openAIChatBody(n int) benchBody {
	var b strings.Builder
	const head = `data: {"id":"chatcmpl-sim-40ac017b-1","object":"chat.completion.chunk","created":1795965104,"model":"sim-fast","choices":[{"index":0,"delta":{`
	const tail = `},"logprobs":null,"finish_reason":%s}],"usage":null}` + "\n\n"
	b.WriteString(head + `"role":"assistant","content":""` + fmt.Sprintf(tail, "null"))
	for i := range n {
		b.WriteString(head + `"content":" ` + benchWord(i) + `"` + fmt.Sprintf(tail, "null"))
	}
	b.WriteString(head + fmt.Sprintf(tail, `"length"`))
	fmt.Fprintf(&b, `data: {"id":"chatcmpl-sim-40ac017b-1","object":"chat.completion.chunk","created":1795965104,"model":"sim-fast","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0}}}`+"\n\n", n, n+1)
	b.WriteString("data: [DONE]\n\n")
	return benchBody{name: "openai-chat", protocol: "openai-chat", body: []byte(b.String()), events: n + 4}
}

func anthropicBody(n int) benchBody {
	var b strings.Builder
	ev := func(typ, data string) { b.WriteString("event: " + typ + "\ndata: " + data + "\n\n") }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i := range n {
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" `+benchWord(i)+`"}}`)
	}
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":%d}}`, n))
	ev("message_stop", `{"type":"message_stop"}`)
	return benchBody{name: "anthropic", protocol: "anthropic", body: []byte(b.String()), events: n + 5}
}

func ollamaBody(n int) benchBody {
	var b strings.Builder
	for i := range n {
		b.WriteString(`{"model":"llama3.2","created_at":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":" ` + benchWord(i) + `"},"done":false}` + "\n")
	}
	fmt.Fprintf(&b, `{"model":"llama3.2","created_at":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":""},"done":true,"done_reason":"length","total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":%d,"eval_duration":4535599000}`+"\n", n)
	return benchBody{name: "ollama", protocol: "ollama", body: []byte(b.String()), events: n + 1}
}

// benchWord varies the token text a little, as real text does.
func benchWord(i int) string {
	words := [...]string{"music", "before", "story", "army", "a", "tokenization", "of", "the"}
	return words[i%len(words)]
}

// eventReader hands out the body one event per Read (events end with sep:
// a blank line for SSE, a newline for NDJSON): the worst case for the client,
// as on a quiet loopback where every flushed chunk arrives in its own read and
// is timestamped on its own.
type eventReader struct {
	rest []byte
	sep  []byte
}

func (r *eventReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		return 0, io.EOF
	}
	n := len(r.rest)
	if i := bytes.Index(r.rest, r.sep); i >= 0 {
		n = i + len(r.sep)
	}
	n = min(n, len(p))
	copy(p, r.rest[:n])
	r.rest = r.rest[n:]
	return n, nil
}

// readModes of the benchmarks: one event per Read, or the whole body as fast
// as the framing asks for it (bytes.Reader), as under load when events queue
// up in the socket.
var benchReadModes = []struct { //nolint:gochecknoglobals // benchmark table
	name string
	open func(body []byte, framing protocol.Framing) io.Reader
}{
	{"event-reads", func(b []byte, f protocol.Framing) io.Reader {
		if f == protocol.FramingNDJSON {
			return &eventReader{rest: b, sep: []byte("\n")}
		}
		return &eventReader{rest: b, sep: []byte("\n\n")}
	}},
	{"bulk-reads", func(b []byte, _ protocol.Framing) io.Reader { return bytes.NewReader(b) }},
}

// perEvent reports the loop's cost per output event next to the per-op
// figures: ns/event, B/event, allocs/event.
func perEvent(b *testing.B, events int, loop func()) {
	b.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	ops := 0
	for b.Loop() {
		loop()
		ops++
	}
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	n := float64(ops * events)
	b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/event")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/event")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/event")
}

// BenchmarkConsume is the client's hot path: framing, decoding, timestamping
// and folding every event of a benchEvents-token answer, then Finish.
func BenchmarkConsume(b *testing.B) {
	bodies := []benchBody{openAIChatBody(benchEvents), anthropicBody(benchEvents), ollamaBody(benchEvents)}
	for _, body := range bodies {
		spec, err := protocol.Lookup(body.protocol)
		if err != nil {
			b.Fatal(err)
		}
		for _, mode := range benchReadModes {
			// Every call keeps its gaps (4 bytes each), whatever gapSamples says.
			b.Run(body.name+"/"+mode.name+"/gaps", func(b *testing.B) {
				cfg := Config{Spec: spec, StallThreshold: 500 * time.Millisecond}
				checkBenchBody(b, cfg, body)
				b.SetBytes(int64(len(body.body)))
				perEvent(b, benchEvents, func() {
					c := NewCall(cfg, time.Now())
					if err := c.Consume(mode.open(body.body, spec.Framing)); err != nil {
						b.Fatal(err)
					}
					if r := c.Finish(); !r.OK {
						b.Fatal(r.Err)
					}
				})
			})
		}
	}
}

// checkBenchBody makes sure the body reads as a complete answer of
// benchEvents tokens, so the benchmark measures the success path.
func checkBenchBody(b *testing.B, cfg Config, body benchBody) {
	b.Helper()
	c := NewCall(cfg, time.Now())
	if err := c.Consume(bytes.NewReader(body.body)); err != nil {
		b.Fatal(err)
	}
	r := c.Finish()
	if !r.OK || r.Chunks != benchEvents || r.OutputTokens != benchEvents {
		b.Fatalf("%s body reads as ok=%v err=%v chunks=%d tokens=%d; want %d tokens",
			body.name, r.OK, r.Err, r.Chunks, r.OutputTokens, benchEvents)
	}
}

// BenchmarkReference runs the two references on the openai-chat body.
func BenchmarkReference(b *testing.B) {
	body := openAIChatBody(benchEvents)
	for _, mode := range benchReadModes {
		// go-sse framing alone, no decoding, no clock: what Consume framed with before
		// (and the oracle of our framer's tests).
		b.Run("go-sse-framing-only/"+mode.name, func(b *testing.B) {
			b.SetBytes(int64(len(body.body)))
			perEvent(b, benchEvents, func() {
				n := 0
				for ev, err := range sse.Read(mode.open(body.body, protocol.FramingSSE), &sse.ReadConfig{MaxEventSize: DefaultMaxEventSize}) {
					if err != nil {
						b.Fatal(err)
					}
					n += len(ev.Data)
				}
				if n == 0 {
					b.Fatal("no events")
				}
			})
		})
		// Our framer alone, on the same body: what replaced go-sse under Consume.
		b.Run("sse-framer-only/"+mode.name, func(b *testing.B) {
			b.SetBytes(int64(len(body.body)))
			perEvent(b, benchEvents, func() {
				n := 0
				f := newSSEFramer(mode.open(body.body, protocol.FramingSSE), DefaultMaxEventSize)
				for {
					ev, err := f.next()
					if err == io.EOF { //nolint:errorlint // returned unwrapped
						break
					}
					if err != nil {
						b.Fatal(err)
					}
					n += len(ev.Data)
				}
				if n == 0 {
					b.Fatal("no events")
				}
			})
		})
		// What bench/bareclient does with each response.
		b.Run("bufio-encoding-json/"+mode.name, func(b *testing.B) {
			b.SetBytes(int64(len(body.body)))
			perEvent(b, benchEvents, func() {
				if tokens := bareReadOpenAIChat(mode.open(body.body, protocol.FramingSSE)); tokens != benchEvents {
					b.Fatalf("bare reader counted %d tokens, want %d", tokens, benchEvents)
				}
			})
		})
	}
}

// bareChunk is the part of a chat chunk a hand-written client reads.
type bareChunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// bareReadOpenAIChat is the simplest honest streaming reader: lines, the data:
// ones unmarshalled with encoding/json; it returns the usage's completion
// tokens. It mirrors bench/bareclient's loop.
func bareReadOpenAIChat(r io.Reader) int64 {
	br := bufio.NewReader(r)
	var tokens int64
	var text strings.Builder
	for {
		line, err := br.ReadBytes('\n')
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			data = bytes.TrimSpace(data)
			if string(data) == "[DONE]" {
				break
			}
			var ch bareChunk
			if json.Unmarshal(data, &ch) == nil {
				for _, c := range ch.Choices {
					text.WriteString(c.Delta.Content)
				}
				if ch.Usage != nil {
					tokens = ch.Usage.CompletionTokens
				}
			}
		}
		if err != nil {
			break
		}
	}
	return tokens
}
