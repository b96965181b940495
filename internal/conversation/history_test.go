package conversation

import (
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
)

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A tool round as each API documents its request history.
func TestBodyPerProtocol(t *testing.T) {
	want := map[string]string{
		"openai-chat": `{"max_tokens":5,"messages":[{"content":"be brief","role":"system"},{"content":"hi","role":"user"},` +
			`{"content":null,"role":"assistant","tool_calls":[{"function":{"arguments":"{\"q\":1}","name":"f"},"id":"c1","type":"function"}]},` +
			`{"content":"42","role":"tool","tool_call_id":"c1"},{"content":"done","role":"assistant"}]}`,
		"ollama": `{"max_tokens":5,"messages":[{"content":"be brief","role":"system"},{"content":"hi","role":"user"},` +
			`{"content":"","role":"assistant","tool_calls":[{"function":{"arguments":{"q":1},"name":"f"}}]},` +
			`{"content":"42","role":"tool","tool_name":"f"},{"content":"done","role":"assistant"}]}`,
		"anthropic": `{"max_tokens":5,"messages":[{"content":"hi","role":"user"},` +
			`{"content":[{"id":"c1","input":{"q":1},"name":"f","type":"tool_use"}],"role":"assistant"},` +
			`{"content":[{"content":"42","tool_use_id":"c1","type":"tool_result"}],"role":"user"},` +
			`{"content":[{"text":"done","type":"text"}],"role":"assistant"}],"system":"be brief"}`,
		"gemini": `{"contents":[{"parts":[{"text":"hi"}],"role":"user"},{"parts":[{"functionCall":{"args":{"q":1},"name":"f"}}],"role":"model"},` +
			`{"parts":[{"functionResponse":{"name":"f","response":{"result":"42"}}}],"role":"user"},{"parts":[{"text":"done"}],"role":"model"}],` +
			`"max_tokens":5,"systemInstruction":{"parts":[{"text":"be brief"}]}}`,
		"openai-responses": `{"input":[{"content":"hi","role":"user"},{"arguments":"{\"q\":1}","call_id":"c1","name":"f","type":"function_call"},` +
			`{"call_id":"c1","output":"42","type":"function_call_output"},{"content":"done","role":"assistant"}],"instructions":"be brief","max_tokens":5}`,
	}
	for proto, w := range want {
		h, err := New(Options{Protocol: proto, System: "be brief"})
		if err != nil {
			t.Fatal(err)
		}
		h.User("hi")
		h.Answer("", "thinking…", []ToolCall{{ID: "c1", Name: "f", Arguments: `{"q":1}`}})
		h.Results([]ToolResult{{ID: "c1", Name: "f", Content: "42"}})
		h.Answer("done", "", nil)
		if got := mustJSON(t, h.Body(map[string]any{"max_tokens": 5})); got != w {
			t.Errorf("%s:\n got %s\nwant %s", proto, got, w)
		}
	}
}

func TestReasoningPolicy(t *testing.T) {
	for _, c := range []struct{ proto, field, want string }{
		{"openai-chat", "", `"reasoning_content":"because"`},
		{"openai-chat", "reasoning", `"reasoning":"because"`},
		{"ollama", "", `"thinking":"because"`},
	} {
		h, err := New(Options{Protocol: c.proto, Reasoning: ReasoningSend, ReasoningField: c.field})
		if err != nil {
			t.Fatal(err)
		}
		h.User("q")
		h.Answer("a", "because", nil)
		if got := mustJSON(t, h.Body(nil)); !strings.Contains(got, c.want) {
			t.Errorf("%s send: %s lacks %s", c.proto, got, c.want)
		}
		d, _ := New(Options{Protocol: c.proto})
		d.User("q")
		d.Answer("a", "because", nil)
		if got := mustJSON(t, d.Body(nil)); strings.Contains(got, "because") {
			t.Errorf("%s drop kept the reasoning: %s", c.proto, got)
		}
	}
	if _, err := New(Options{Protocol: "tgi", Reasoning: ReasoningSend}); err == nil {
		t.Error("tgi send: want a refusal")
	}
	r, _ := New(Options{Protocol: "openai-responses", Reasoning: ReasoningSend})
	r.User("q")
	r.Answer("a", "because", nil, Thought{Kind: "item", Signature: `{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAA"}`})
	want := `{"input":[{"content":"q","role":"user"},{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAA"},{"content":"a","role":"assistant"}]}`
	if got := mustJSON(t, r.Body(nil)); got != want {
		t.Errorf("openai-responses send:\n got %s\nwant %s", got, want)
	}
	if _, err := New(Options{Protocol: "openai-chat", Reasoning: "keep"}); err == nil {
		t.Error("an unknown policy was accepted")
	}
	if _, err := New(Options{Protocol: "tgi"}); err == nil || !strings.Contains(err.Error(), "tgi") {
		t.Errorf("a protocol without history: %v", err)
	}
}

func TestCapTurns(t *testing.T) {
	h, _ := New(Options{Protocol: "openai-chat", MaxTurns: 2})
	h.User("1")
	h.Answer("", "", []ToolCall{{ID: "a", Name: "f"}})
	h.Results([]ToolResult{{ID: "a", Content: "r"}})
	h.Answer("one", "", nil)
	h.User("2")
	h.Answer("two", "", nil)
	h.User("3")
	msgs := h.Messages()
	if len(msgs) != 3 || msgs[0].Text != "2" || msgs[2].Text != "3" || h.Dropped() != 1 {
		t.Fatalf("cap 2 turns kept %+v (dropped %d)", msgs, h.Dropped())
	}
}

func TestCapTokens(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) }
	h, _ := New(Options{Protocol: "openai-chat", MaxTokens: 5, Count: words})
	h.User("a b")
	h.Answer("c d", "", nil)
	h.User("e f")
	h.Answer("g h", "", nil)
	h.User("i j k l m n o") // alone over the cap: kept, the turn being asked
	if m := h.Messages(); len(m) != 1 || m[0].Text != "i j k l m n o" {
		t.Fatalf("token cap kept %+v", m)
	}
	if _, err := New(Options{Protocol: "openai-chat", MaxTokens: 5}); err == nil {
		t.Error("a token cap without a counter was accepted")
	}
}

func TestMalformedArgumentsKept(t *testing.T) {
	h, _ := New(Options{Protocol: "anthropic"})
	h.User("q")
	h.Answer("", "", []ToolCall{{ID: "x", Name: "f", Arguments: `{"a":`}})
	if got := mustJSON(t, h.Body(nil)); !strings.Contains(got, `"_raw":"{\"a\":"`) {
		t.Errorf("malformed arguments lost: %s", got)
	}
}

func TestThink(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	if d := (Think{Median: time.Second}).Sample(r); d != time.Second {
		t.Errorf("fixed: %s", d)
	}
	u := Think{Dist: ThinkUniform, Min: time.Second, Max: 2 * time.Second}
	for range 1000 {
		if d := u.Sample(r); d < time.Second || d > 2*time.Second {
			t.Fatalf("uniform out of range: %s", d)
		}
	}
	l := Think{Dist: ThinkLognormal, Median: time.Second, Sigma: 0.5}
	below := 0
	for range 10000 {
		if l.Sample(r) < time.Second {
			below++
		}
	}
	if below < 4500 || below > 5500 { // the median splits draws in half
		t.Errorf("lognormal: %d of 10000 below the median", below)
	}
	for _, bad := range []Think{{Dist: "poisson"}, {Dist: ThinkUniform, Min: 2, Max: 1}, {Dist: ThinkLognormal}} {
		if bad.Check() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestSession(t *testing.T) {
	s := &Session{Key: "k1", Headers: []string{"X-Session-Affinity"}, BodyField: "user", RouteHeader: "X-Route"}
	h, body := http.Header{}, map[string]any{}
	s.Apply(h, body)
	if h.Get("X-Session-Affinity") != "k1" || body["user"] != "k1" || h.Get("X-Route") != "" {
		t.Fatalf("turn 1: %v %v", h, body)
	}
	s.Answered(http.Header{"X-Route": {"replica-3"}})
	s.Answered(http.Header{}) // a later answer without the header keeps it
	h = http.Header{}
	s.Apply(h, map[string]any{"user": "script's"})
	if h.Get("X-Route") != "replica-3" {
		t.Fatalf("turn 2 lost the router token: %v", h)
	}
}

func TestJob(t *testing.T) {
	j := NewJob(time.Unix(0, 0))
	j.Call(time.Second, measure.Of(100*time.Millisecond), 10, 5, true)
	j.Call(2*time.Second, measure.Duration{}, 0, 7, true)
	if j.Model != 3*time.Second || j.Steps != 2 || j.TokensOut != 12 || j.InKnown {
		t.Fatalf("%+v", j)
	}
	if len(j.TTFTs) != 2 || j.TTFTs[0] != measure.Of(100*time.Millisecond) || j.TTFTs[1].Known() {
		t.Fatalf("TTFTs %v: want 100ms, then none", j.TTFTs)
	}
}

func TestSessionCookie(t *testing.T) {
	s := &Session{Key: "k9", Cookie: "sid"}
	h := http.Header{"Cookie": {"theirs=1"}}
	s.Apply(h, map[string]any{})
	if got := h.Get("Cookie"); got != "theirs=1; sid=k9" {
		t.Fatalf("cookie: %q", got)
	}
}

// Think time is never lateness: a credit due before the pause is due the
// pause later; one due during it, at its end; one due after, unchanged.
func TestShiftDue(t *testing.T) {
	t0 := time.Unix(100, 0)
	start, end := t0.Add(time.Second), t0.Add(3*time.Second)
	for _, c := range []struct{ due, want time.Time }{
		{time.Time{}, time.Time{}},
		{t0, t0.Add(2 * time.Second)},
		{t0.Add(2 * time.Second), end},
		{end.Add(time.Second), end.Add(time.Second)},
	} {
		if got := ShiftDue(c.due, start, end); !got.Equal(c.want) {
			t.Errorf("due %v: got %v, want %v", c.due, got, c.want)
		}
	}
}

// U users at Q turns/s: each user every U/Q, staggered 1/Q apart, and a
// late answer sends the next turn at once with no catch-up.
func TestPace(t *testing.T) {
	p := Pace{Users: 4, Rate: 2}
	if p.Check() != nil || p.Interval() != 2*time.Second {
		t.Fatalf("interval %s", p.Interval())
	}
	t0 := time.Unix(0, 0)
	for k, want := range []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 0} {
		if got := p.First(t0, k).Sub(t0); got != want {
			t.Errorf("user %d starts at %s, want %s", k, got, want)
		}
	}
	if got := p.Next(t0, t0.Add(time.Second)); !got.Equal(t0.Add(2 * time.Second)) {
		t.Errorf("on time: next at %v", got)
	}
	late := t0.Add(5 * time.Second)
	if got := p.Next(t0, late); !got.Equal(late) {
		t.Errorf("late answer: next at %v, want at once (%v)", got, late)
	}
	for _, bad := range []Pace{{Users: 0, Rate: 1}, {Users: 1, Rate: 0}} {
		if bad.Check() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// Anthropic's thinking goes back as the blocks that streamed: each signed
// thinking block with its own text and signature, the redacted one with its
// data, before the text and tool_use blocks; unsigned thinking is left out.
// 'drop' sends none of it.
func TestAnthropicThinkingSentBack(t *testing.T) {
	thoughts := []Thought{
		{Kind: "thinking", Text: "first ", Signature: "sig-1"},
		{Kind: "redacted_thinking", Signature: "opaque=="},
		{Kind: "thinking", Text: "second", Signature: "sig-2"},
	}
	h, err := New(Options{Protocol: "anthropic", Reasoning: ReasoningSend})
	if err != nil {
		t.Fatal(err)
	}
	h.User("q")
	h.Answer("a", "first second unsigned", []ToolCall{{ID: "t1", Name: "f", Arguments: `{"x":1}`}}, thoughts...)
	want := `{"messages":[{"content":"q","role":"user"},{"content":[` +
		`{"signature":"sig-1","thinking":"first ","type":"thinking"},` +
		`{"data":"opaque==","type":"redacted_thinking"},` +
		`{"signature":"sig-2","thinking":"second","type":"thinking"},` +
		`{"text":"a","type":"text"},{"id":"t1","input":{"x":1},"name":"f","type":"tool_use"}],"role":"assistant"}]}`
	if got := mustJSON(t, h.Body(nil)); got != want {
		t.Errorf("send:\n got %s\nwant %s", got, want)
	}
	d, _ := New(Options{Protocol: "anthropic"})
	d.User("q")
	d.Answer("a", "first second", nil, thoughts...)
	if got := mustJSON(t, d.Body(nil)); strings.Contains(got, "sig-") || strings.Contains(got, "thinking") {
		t.Errorf("drop sent the thinking: %s", got)
	}
}

// Gemini's signatures go back on the parts they streamed on: a thought
// part's with that thought's text, the text part's, a functionCall part's by
// its index; thought text no signature covered follows the signed thoughts.
func TestGeminiThoughtSignaturesSentBack(t *testing.T) {
	h, err := New(Options{Protocol: "gemini", Reasoning: ReasoningSend})
	if err != nil {
		t.Fatal(err)
	}
	h.User("q")
	h.Answer("a", "plan more", []ToolCall{{Name: "f", Arguments: `{}`}, {Name: "g", Arguments: `{}`}},
		Thought{Kind: "thought", Text: "plan ", Signature: "s-th"},
		Thought{Kind: "call", Call: 1, Signature: "s-g"},
		Thought{Kind: "text", Signature: "s-tx"})
	want := `{"contents":[{"parts":[{"text":"q"}],"role":"user"},{"parts":[` +
		`{"text":"plan ","thought":true,"thoughtSignature":"s-th"},{"text":"more","thought":true},` +
		`{"text":"a","thoughtSignature":"s-tx"},{"functionCall":{"args":{},"name":"f"}},` +
		`{"functionCall":{"args":{},"name":"g"},"thoughtSignature":"s-g"}],"role":"model"}]}`
	if got := mustJSON(t, h.Body(nil)); got != want {
		t.Errorf("send:\n got %s\nwant %s", got, want)
	}
}

// Chain: turn 1 sends the whole (short) history; each later turn names the
// previous answer and sends only what came after it (the tool results, the
// new user turn); an answer without an id sends everything again.
func TestResponsesChain(t *testing.T) {
	h, err := New(Options{Protocol: "openai-responses", System: "be brief", Chain: true})
	if err != nil {
		t.Fatal(err)
	}
	h.User("one")
	if got, want := mustJSON(t, h.Body(nil)), `{"input":[{"content":"one","role":"user"}],"instructions":"be brief"}`; got != want {
		t.Errorf("turn 1:\n got %s\nwant %s", got, want)
	}
	h.Answer("", "", []ToolCall{{ID: "c1", Name: "f", Arguments: "{}"}})
	h.Responded("resp_1")
	h.Results([]ToolResult{{ID: "c1", Name: "f", Content: "42"}})
	want := `{"input":[{"call_id":"c1","output":"42","type":"function_call_output"}],"instructions":"be brief","previous_response_id":"resp_1"}`
	if got := mustJSON(t, h.Body(nil)); got != want {
		t.Errorf("after the tool call:\n got %s\nwant %s", got, want)
	}
	h.Answer("it is 42", "", nil)
	h.Responded("resp_2")
	h.User("two")
	want = `{"input":[{"content":"two","role":"user"}],"instructions":"be brief","previous_response_id":"resp_2"}`
	if got := mustJSON(t, h.Body(nil)); got != want {
		t.Errorf("turn 2:\n got %s\nwant %s", got, want)
	}
	h.Answer("ok", "", nil)
	h.Responded("")
	h.User("three")
	if got := mustJSON(t, h.Body(nil)); strings.Contains(got, "previous_response_id") || !strings.Contains(got, `"content":"one"`) {
		t.Errorf("after an answer without an id, want the whole history: %s", got)
	}
	for _, o := range []Options{
		{Protocol: "openai-chat", Chain: true},
		{Protocol: "openai-responses", Chain: true, MaxTurns: 2},
	} {
		if _, err := New(o); err == nil || !strings.Contains(err.Error(), "chain") {
			t.Errorf("%+v: want a refusal naming chain, got %v", o, err)
		}
	}
}

func TestDeeplyNestedArgumentsGoBackAsText(t *testing.T) {
	h, _ := New(Options{Protocol: "anthropic"})
	h.User("q")
	deep := `{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`
	h.Answer("", "", []ToolCall{{ID: "x", Name: "f", Arguments: deep}})
	if got := mustJSON(t, h.Body(nil)); !strings.Contains(got, `"_raw":"{\"a\":[[[`) {
		t.Errorf("deep arguments were decoded, not kept as text: %.200s", got)
	}
}
