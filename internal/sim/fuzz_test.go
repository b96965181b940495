package sim

import (
	"net/http"
	"testing"
)

// The request parsers and the fault header take untrusted input: they must
// answer every input with a request or a 4xx, never a panic.

func fuzzParse(f *testing.F, p protocol, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, e := p.parse(body)
		if (req == nil) == (e == nil) {
			t.Fatalf("want a request or an error, got %v and %v", req, e)
		}
		if e != nil {
			if e.Status < 400 || e.Status > 499 || e.Message == "" {
				t.Fatalf("bad error %+v", e)
			}
			if b := p.errorBody(e); len(b) == 0 {
				t.Fatal("empty error body")
			}
			return
		}
		if req.MaxTokens < 0 || req.MaxTokens > maxOutputTokens {
			t.Fatalf("max_tokens %d passed validation", req.MaxTokens)
		}
	})
}

func FuzzParseChat(f *testing.F) {
	fuzzParse(f, openAIChat{},
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":5,"stream":true,"stream_options":{"include_usage":true}}`,
		`{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}]}`,
		`{"messages":[{"role":"assistant","content":null}],"max_completion_tokens":3}`,
		`{"messages":[]}`, `{"messages":"x"}`, `{`, `null`, `[]`, `{"max_tokens":-1,"messages":[{"role":"u"}]}`,
	)
}

func FuzzParseCompletions(f *testing.F) {
	fuzzParse(f, openAICompletions{},
		`{"prompt":"once","max_tokens":2,"stream":true}`, `{"prompt":["a"]}`, `{"prompt":[1,2,3]}`,
		`{"prompt":[]}`, `{"prompt":[-1]}`, `{"prompt":{}}`, `{}`,
	)
}

func FuzzParseFaults(f *testing.F) {
	for _, s := range []string{
		"stall=2000@5", "disconnect@10", "error@3", "status=500", "status=429", "malformed@2",
		"headers_delay=300", "ttft=1500", "html", "gateway=200", "none", "stall=1@2,error@0", "", ",,", "=@",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fl, err := ParseFaults(s)
		if err != nil {
			return
		}
		if fl.Status != 0 && (fl.Status < 400 || fl.Status > 599) {
			t.Fatalf("status %d accepted", fl.Status)
		}
		for _, st := range fl.Stalls {
			if st.Dur < 0 || st.After < 0 {
				t.Fatalf("stall %+v accepted", st)
			}
		}
		if fl.TTFT < 0 || fl.HeadersDelay < 0 || fl.Gateway < 0 {
			t.Fatalf("negative delay accepted: %+v", fl)
		}
		// What parsed once parses again from its normalized form.
		again, err := ParseFaults(fl.String())
		if err != nil || again.String() != fl.String() {
			t.Fatalf("%q normalizes to %q, which gives %v / %q", s, fl.String(), err, again.String())
		}
		_ = http.StatusText(fl.Status)
	})
}
