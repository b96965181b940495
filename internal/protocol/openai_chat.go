package protocol

import (
	"errors"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

// errInvalidJSON is returned for an event whose payload is not one JSON value.
var errInvalidJSON = errors.New("event data is not valid JSON")

const doneSentinel = "[DONE]"

func init() {
	Register(&Spec{
		Name:    "openai-chat",
		Framing: FramingSSE,
		Path:    func(Request) string { return "/chat/completions" },
		Prepare: prepareOpenAI,
		Headers: func(h http.Header, r Request) {
			bearer(h, r)
			h.Set("Accept", "text/event-stream")
		},
		NewDecoder: func() Decoder { return &openAIChat{} },
	})
}

// prepareOpenAI asks for a stream with a final usage chunk (and, when wanted,
// vLLM's per-chunk usage) without overriding what the caller set.
func prepareOpenAI(body map[string]any, r Request) {
	setDefault(body, "stream", true)
	if r.Model != "" {
		setDefault(body, "model", r.Model)
	}
	so, _ := body["stream_options"].(map[string]any)
	if so == nil {
		if _, set := body["stream_options"]; set {
			return // the caller set something that is not an object: leave it alone
		}
		so = map[string]any{}
		body["stream_options"] = so
	}
	setDefault(so, "include_usage", true)
	if r.ContinuousUsage {
		setDefault(so, "continuous_usage_stats", true)
	}
}

// openAIChat decodes chat.completion.chunk events (OpenAI, vLLM, SGLang, llama.cpp,
// LM Studio, Azure).
type openAIChat struct{}

func (*openAIChat) Decode(ev Event, d *Delta) error {
	data := strings.TrimSpace(ev.Data)
	if data == doneSentinel {
		d.EndOfStream = true
		return nil
	}
	if !gjson.Valid(data) {
		return errInvalidJSON
	}
	root := gjson.Parse(data)
	if e := root.Get("error"); e.Exists() {
		d.Err = openAIError(e)
		return nil
	}
	if m := root.Get("model"); m.Type == gjson.String {
		d.Model = m.Str
	}
	hasChoices := false
	root.Get("choices").ForEach(func(_, ch gjson.Result) bool {
		hasChoices = true
		decodeChatChoice(ch, d)
		return true
	})
	if u := root.Get("usage"); u.IsObject() {
		d.Usage = openAIUsage(u)
		// A usage object on a chunk that still carries choices is vLLM's
		// continuous_usage_stats: a running total, exact per event.
		d.UsageCumulative = hasChoices
	}
	return nil
}

func decodeChatChoice(ch gjson.Result, d *Delta) {
	delta := ch.Get("delta")
	d.Text += delta.Get("content").Str
	d.Text += delta.Get("refusal").Str
	if r := delta.Get("reasoning_content"); r.Str != "" {
		d.Reasoning += r.Str
	} else {
		d.Reasoning += delta.Get("reasoning").Str
	}
	delta.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		d.ToolCalls = append(d.ToolCalls, ToolCallDelta{
			Index: int(tc.Get("index").Int()),
			ID:    tc.Get("id").Str,
			Name:  tc.Get("function.name").Str,
			Args:  tc.Get("function.arguments").Str,
		})
		return true
	})
	if fr := ch.Get("finish_reason"); fr.Type == gjson.String && fr.Str != "" {
		d.FinishReason = fr.Str
		d.Terminal = true
	}
}

func openAIUsage(u gjson.Result) *Usage {
	return &Usage{
		PromptTokens:     u.Get("prompt_tokens").Int(),
		CompletionTokens: u.Get("completion_tokens").Int(),
		CachedTokens:     u.Get("prompt_tokens_details.cached_tokens").Int(),
		ReasoningTokens:  u.Get("completion_tokens_details.reasoning_tokens").Int(),
		TotalTokens:      u.Get("total_tokens").Int(),
	}
}

func openAIError(e gjson.Result) *StreamError {
	if e.Type == gjson.String {
		return &StreamError{Message: e.Str}
	}
	msg := e.Get("message").Str
	if msg == "" {
		msg = e.Raw
	}
	return &StreamError{Message: msg, Code: e.Get("code").String()}
}
