package protocol

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Decoder fuzzers: each feeds arbitrary event sequences to one protocol's
// decoder (one decoder per body, as in a call: some keep state between events)
// and checks it never panics and never reports impossible figures. Seeds are
// the fixtures in testdata/protocols/<protocol>/; a crasher found here becomes
// a fixture there. Framing is fuzzed separately, in internal/stream.

func FuzzOpenAIChat(f *testing.F)        { fuzzDecoder(f, "openai-chat") }
func FuzzOpenAICompletions(f *testing.F) { fuzzDecoder(f, "openai-completions") }
func FuzzOpenAIResponses(f *testing.F)   { fuzzDecoder(f, "openai-responses") }
func FuzzAnthropic(f *testing.F)         { fuzzDecoder(f, "anthropic") }
func FuzzOllama(f *testing.F)            { fuzzDecoder(f, "ollama") }
func FuzzGemini(f *testing.F)            { fuzzDecoder(f, "gemini") }
func FuzzTGI(f *testing.F)               { fuzzDecoder(f, "tgi") }
func FuzzLlamaCpp(f *testing.F)          { fuzzDecoder(f, "llamacpp") }
func FuzzRawSSE(f *testing.F)            { fuzzDecoder(f, "sse") }

func fuzzDecoder(f *testing.F, name string) {
	spec, err := Lookup(name)
	if err != nil {
		f.Fatal(err)
	}
	seeds, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "protocols", name, "*.txt"))
	if len(seeds) == 0 {
		f.Fatalf("no fixtures for %s", name)
	}
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Fuzz(func(t *testing.T, body string) {
		dec := spec.NewDecoder()
		var d Delta
		var lastCum int64
		for _, ev := range splitEvents(body, spec.Framing) {
			d.Reset()
			if err := dec.Decode(ev, &d); err != nil {
				if err.Error() == "" {
					t.Fatal("a decode error must say what is wrong")
				}
				return // the call ends at the first undecodable event
			}
			checkDelta(t, &d)
			// The decoders that keep a running output count (Gemini's omitted
			// fields, llama.cpp's tokens_predicted) must never let it go back.
			if d.Usage != nil && d.UsageCumulative && (name == "gemini" || name == "llamacpp") {
				if d.Usage.CompletionTokens < lastCum {
					t.Fatalf("running output count went back from %d to %d", lastCum, d.Usage.CompletionTokens)
				}
				lastCum = d.Usage.CompletionTokens
			}
			if d.Err != nil || d.EndOfStream {
				return
			}
		}
	})
}

func checkDelta(t *testing.T, d *Delta) {
	t.Helper()
	if u := d.Usage; u != nil {
		for _, n := range []int64{u.PromptTokens, u.CompletionTokens, u.CachedTokens, u.ReasoningTokens, u.TotalTokens} {
			if n < 0 {
				t.Fatalf("negative token count in %+v", *u)
			}
		}
	}
	if d.UsageCumulative && d.Usage == nil {
		t.Fatal("UsageCumulative without Usage")
	}
	for k, v := range d.ServerTimings {
		if v != v { // NaN
			t.Fatalf("server timing %s is NaN", k)
		}
	}
}

// splitEvents is a deliberately simple framing, enough to feed decoders: SSE
// blocks split at blank lines with their event: and data: fields, NDJSON lines.
// The real framing (and its edge cases) is fuzzed in internal/stream.
func splitEvents(body string, framing Framing) []Event {
	body = strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n")
	var out []Event
	if framing == FramingNDJSON {
		for _, line := range strings.Split(body, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				out = append(out, Event{Data: line})
			}
		}
		return out
	}
	for _, block := range strings.Split(body, "\n\n") {
		var ev Event
		var data []string
		for _, line := range strings.Split(block, "\n") {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				ev.Type = value
			case "id":
				ev.ID = value
			case "data":
				data = append(data, value)
			}
		}
		if data != nil {
			ev.Data = strings.Join(data, "\n")
			out = append(out, ev)
		}
	}
	return out
}
