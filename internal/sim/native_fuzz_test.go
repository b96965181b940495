package sim

import (
	"net/http"
	"net/url"
	"testing"
)

// FuzzNativeRequests feeds arbitrary bodies (and Gemini paths, raw-stream
// queries) to every native protocol's request reader: it must answer with a
// request or an error, never panic, and never accept an out-of-range length.
func FuzzNativeRequests(f *testing.F) {
	f.Add(`{"max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, "m:streamGenerateContent?alt=sse")
	f.Add(`{"input":[{"role":"user","content":[{"type":"input_text","text":"x"}]}],"max_output_tokens":-1}`, "m:generateContent")
	f.Add(`{"options":{"num_predict":-2},"prompt":"x","messages":null}`, ":x")
	f.Add(`{"contents":[{"parts":[{"text":"a"}]}],"generationConfig":{"maxOutputTokens":1e30}}`, "a/b:streamGenerateContent")
	f.Add(`{"inputs":"x","parameters":{"max_new_tokens":0}}`, "max_tokens=3&prompt=x")
	f.Add(`{"prompt":[1,2,3],"n_predict":-1}`, "max_tokens=x")
	protocols := []protocol{
		anthropic{}, openAIResponses{}, ollama{}, ollama{generate: true}, gemini{}, tgi{stream: true}, llamaCpp{}, rawEvents{},
	}
	f.Fuzz(func(t *testing.T, body, rest string) {
		for _, p := range protocols {
			r := &http.Request{URL: &url.URL{Path: geminiPrefix + rest, RawQuery: rest}}
			if u, err := url.Parse(geminiPrefix + rest); err == nil {
				r.URL = u
			}
			g, e := parseRequest(p, r, []byte(body))
			if (g == nil) == (e == nil) {
				t.Fatalf("%T: exactly one of request and error: %v %v", p, g, e)
			}
			if g != nil && (g.MaxTokens < 0 || g.MaxTokens > maxOutputTokens) {
				t.Fatalf("%T: max tokens %d accepted", p, g.MaxTokens)
			}
			if e != nil && (e.Status < 400 || e.Message == "") {
				t.Fatalf("%T: error without status or message: %+v", p, e)
			}
		}
	})
}
