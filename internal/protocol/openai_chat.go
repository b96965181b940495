package protocol

import (
	"net/http"
	"strings"

	"github.com/tidwall/gjson"
)

const doneSentinel = "[DONE]"

func init() {
	Register(&Spec{
		Name:       "openai-chat",
		Framing:    FramingSSE,
		Path:       func(Request) string { return "/chat/completions" },
		Prepare:    prepareOpenAI,
		Headers:    openAIHeaders,
		NewDecoder: func() Decoder { return &openAIChat{} },
	})
}

func openAIHeaders(h http.Header, r Request) {
	bearer(h, r)
	streamHeaders(h, "text/event-stream")
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

// openAIChat decodes chat.completion.chunk events (OpenAI, Azure, vLLM, SGLang,
// llama.cpp, TGI, Ollama and LM Studio on their OpenAI routes).
type openAIChat struct{}

func (*openAIChat) Decode(ev Event, d *Delta) error {
	return decodeOpenAIChunk(ev, d, decodeChatChoice)
}

// decodeOpenAIChunk is the part of a chunk that chat and legacy completions
// share: sentinel, errors, model, usage and llama.cpp's timings.
func decodeOpenAIChunk(ev Event, d *Delta, choice func(gjson.Result, *Delta)) error {
	if strings.TrimSpace(ev.Data) == doneSentinel {
		d.EndOfStream = true
		return nil
	}
	root, err := parseObject(ev.Data)
	if err != nil {
		return err
	}
	if e := streamedOpenAIError(root); e != nil {
		d.Err = e
		return nil
	}
	d.Model = str(root, "model")
	// Azure's first chunk has choices: [] and only prompt_filter_results: it
	// carries nothing, and it is not a usage chunk unless usage is an object.
	hasChoices := false
	root.Get("choices").ForEach(func(_, ch gjson.Result) bool {
		hasChoices = true
		choice(ch, d)
		return true
	})
	if u := root.Get("usage"); u.IsObject() {
		d.Usage = openAIUsage(u)
		// Usage on a chunk that still carries choices is vLLM/SGLang's
		// continuous_usage_stats: a running total, exact per event. The final
		// usage chunk (choices: []) repeats the total.
		d.UsageCumulative = hasChoices
	}
	if t := root.Get("timings"); t.IsObject() {
		d.ServerTimings = llamaCppTimings(t)
	}
	return nil
}

// decodeChatChoice reads one choice. With n > 1 the choices' pieces are folded
// into one text in arrival order: the figures stay right, the text is only
// meaningful for n = 1.
func decodeChatChoice(ch gjson.Result, d *Delta) {
	delta := ch.Get("delta")
	d.Text += str(delta, "content")
	d.Text += str(delta, "refusal")
	// vLLM renamed reasoning_content to reasoning (PR #27752) and later dropped
	// the old name; SGLang and llama.cpp still use reasoning_content.
	if r := str(delta, "reasoning_content"); r != "" {
		d.Reasoning += r
	} else {
		d.Reasoning += str(delta, "reasoning")
	}
	delta.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
		d.ToolCalls = append(d.ToolCalls, ToolCallDelta{
			Index: int(tc.Get("index").Int()),
			ID:    str(tc, "id"),
			Name:  str(tc, "function.name"),
			Args:  str(tc, "function.arguments"),
		})
		return true
	})
	setFinish(d, str(ch, "finish_reason"))
}

// setFinish records a finish reason; any finish reason is the server saying the
// answer is complete.
func setFinish(d *Delta, reason string) {
	if reason != "" {
		d.FinishReason = reason
		d.Terminal = true
	}
}

func openAIUsage(u gjson.Result) *Usage {
	reasoning := nonNegInt(u, "completion_tokens_details.reasoning_tokens")
	if reasoning == 0 {
		reasoning = nonNegInt(u, "reasoning_tokens") // SGLang puts it at the top level
	}
	return &Usage{
		PromptTokens:     nonNegInt(u, "prompt_tokens"),
		CompletionTokens: nonNegInt(u, "completion_tokens"),
		CachedTokens:     nonNegInt(u, "prompt_tokens_details.cached_tokens"),
		ReasoningTokens:  reasoning,
		TotalTokens:      nonNegInt(u, "total_tokens"),
	}
}

// streamedOpenAIError finds an error sent inside a 200 stream: {"error": {…}}
// (OpenAI, vLLM, llama.cpp, TGI's OpenAI route), {"error": "…"} (TGI native), or
// the flat {"object": "error", "message": …} of older vLLM and SGLang.
func streamedOpenAIError(root gjson.Result) *StreamError {
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		se := openAIError(e)
		if se.Code == "" {
			se.Code = str(root, "error_type")
		}
		return se
	}
	if str(root, "object") == "error" {
		return &StreamError{Message: orRaw(str(root, "message"), root), Code: root.Get("code").String()}
	}
	return nil
}

func openAIError(e gjson.Result) *StreamError {
	if e.Type == gjson.String {
		return &StreamError{Message: e.Str}
	}
	code := e.Get("code").String()
	if code == "" {
		code = e.Get("http_status_code").String()
	}
	if code == "" {
		code = str(e, "type")
	}
	return &StreamError{Message: orRaw(str(e, "message"), e), Code: code}
}

// orRaw falls back to the raw JSON when an error has no message field, so the
// user still sees what the server said.
func orRaw(msg string, v gjson.Result) string {
	if msg != "" {
		return msg
	}
	return v.Raw
}
