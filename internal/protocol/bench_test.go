package protocol

import (
	"testing"
)

// contentEvents are one ordinary output-carrying event per protocol, shaped as
// the servers send them: most of a long answer is made of these, so their cost
// is the client's per-token cost. The openai-chat one is byte for byte what
// llm-sim sends, so these figures line up with the loopback benchmark.
var contentEvents = []struct { //nolint:gochecknoglobals // benchmark table
	name     string
	protocol string
	ev       Event
}{
	{"openai-chat", "openai-chat", Event{Data: `{"id":"chatcmpl-sim-40ac017b-1","object":"chat.completion.chunk","created":1795965104,"model":"sim-fast","choices":[{"index":0,"delta":{"content":" music"},"logprobs":null,"finish_reason":null}],"usage":null}`}},
	// vLLM with continuous_usage_stats: usage on every chunk, the worst case of
	// the OpenAI shape.
	{"openai-chat-continuous-usage", "openai-chat", Event{Data: `{"id":"chatcmpl-b1","object":"chat.completion.chunk","created":1767225600,"model":"Qwen/Qwen3-8B","choices":[{"index":0,"delta":{"content":" music"},"logprobs":null,"finish_reason":null,"stop_reason":null}],"usage":{"prompt_tokens":26,"total_tokens":40,"completion_tokens":14}}`}},
	{"anthropic", "anthropic", Event{Type: "content_block_delta", Data: `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" music"}}`}},
	{"openai-responses", "openai-responses", Event{Type: "response.output_text.delta", Data: `{"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":" music","logprobs":[]}`}},
	{"ollama", "ollama", Event{Data: `{"model":"llama3.2","created_at":"2026-01-01T00:00:00.000Z","message":{"role":"assistant","content":" music"},"done":false}`}},
	{"gemini", "gemini", Event{Data: `{"candidates":[{"content":{"parts":[{"text":" music"}],"role":"model"},"index":0}],"usageMetadata":{"promptTokenCount":9,"candidatesTokenCount":14,"totalTokenCount":23},"modelVersion":"gemini-2.5-flash","responseId":"r1"}`}},
}

// BenchmarkDecodeContentEvent is the decoder alone: one content event into a
// reused Delta, as internal/stream calls it. Framing is measured in
// internal/stream.
func BenchmarkDecodeContentEvent(b *testing.B) {
	for _, tc := range contentEvents {
		b.Run(tc.name, func(b *testing.B) {
			spec, err := Lookup(tc.protocol)
			if err != nil {
				b.Fatal(err)
			}
			dec := spec.NewDecoder()
			var d Delta
			// Check once that the event is what it claims to be, so the loop
			// measures the output path and not an error path.
			if err := dec.Decode(tc.ev, &d); err != nil || !d.HasOutput() {
				b.Fatalf("event decodes to %+v, %v; want output", d, err)
			}
			b.SetBytes(int64(len(tc.ev.Data)))
			b.ReportAllocs()
			for b.Loop() {
				d.Reset()
				if err := dec.Decode(tc.ev, &d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// usageEvent is the last chunk of an OpenAI stream with include_usage, byte
// for byte what llm-sim sends: no choices, the call's usage with its cached
// tokens. Every call decodes one; in short answers it is a large share of
// the decoding.
const usageEvent = `{"id":"chatcmpl-sim-40ac017b-1","object":"chat.completion.chunk","created":1795965104,"model":"sim-fast","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16,"prompt_tokens_details":{"cached_tokens":0}}}`

// BenchmarkDecodeUsageEvent is the decoder alone on usageEvent.
func BenchmarkDecodeUsageEvent(b *testing.B) {
	spec, err := Lookup("openai-chat")
	if err != nil {
		b.Fatal(err)
	}
	dec := spec.NewDecoder()
	ev := Event{Data: usageEvent}
	var d Delta
	if err := dec.Decode(ev, &d); err != nil || d.Usage == nil || d.Usage.CompletionTokens != 4 {
		b.Fatalf("event decodes to %+v, %v; want its usage", d, err)
	}
	b.SetBytes(int64(len(ev.Data)))
	b.ReportAllocs()
	for b.Loop() {
		d.Reset()
		if err := dec.Decode(ev, &d); err != nil {
			b.Fatal(err)
		}
	}
}
