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
		// max_completion_tokens replaced max_tokens; a body with both is
		// limited by the newer one, as OpenAI and vLLM read it. A limit set
		// for the caller goes in max_tokens, which every compatible server
		// reads.
		OutputLimitField: "max_tokens",
		MaxTokens:        func(body map[string]any) int64 { return firstCount(body, "max_completion_tokens", "max_tokens") },
		LengthFinish:     "length",
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
	if scanChatChunk(ev.Data, d) { // the ordinary chunk, in one pass (openai_chat_scan.go)
		return nil
	}
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
	// One pass over the chunk's top-level fields: looking each one up with Get
	// would rescan the chunk from its start, and this is the hottest path of a
	// load test (one call per token).
	var choices, usage, timings gjson.Result
	failed := false
	root.ForEach(func(key, v gjson.Result) bool {
		switch key.Str {
		case "error":
			failed = failed || v.Type != gjson.Null
		case "object":
			failed = failed || v.Str == "error"
		case "model":
			if v.Type == gjson.String {
				d.Model = v.Str
			}
		case "choices":
			choices = v
		case "usage":
			usage = v
		case "timings":
			timings = v
		}
		return true
	})
	if failed {
		d.Err = streamedOpenAIError(root)
		return nil
	}
	// Azure's first chunk has choices: [] and only prompt_filter_results: it
	// carries nothing, and it is not a usage chunk unless usage is an object.
	hasChoices := false
	choices.ForEach(func(_, ch gjson.Result) bool {
		hasChoices = true
		choice(ch, d)
		return true
	})
	if usage.IsObject() {
		d.keepUsage(openAIUsage(usage))
		// Usage on a chunk that still carries choices is vLLM/SGLang's
		// continuous_usage_stats: a running total, exact per event. The final
		// usage chunk (choices: []) repeats the total.
		d.UsageCumulative = hasChoices
	}
	if timings.IsObject() {
		d.ServerTimings = llamaCppTimings(timings)
	}
	return nil
}

// decodeChatChoice reads one choice, with its index (n > 1).
func decodeChatChoice(ch gjson.Result, d *Delta) {
	ch.ForEach(func(key, v gjson.Result) bool {
		switch key.Str {
		case "index":
			d.Choice = int(v.Int())
		case "delta":
			decodeChatDelta(v, d)
		case "finish_reason":
			if v.Type == gjson.String {
				setFinish(d, v.Str)
			}
		}
		return true
	})
}

// decodeChatDelta reads a choice's delta in one pass.
func decodeChatDelta(delta gjson.Result, d *Delta) {
	var reasoningContent, reasoning string
	delta.ForEach(func(key, v gjson.Result) bool {
		if v.Type == gjson.String {
			switch key.Str {
			case "content", "refusal":
				d.Text += v.Str
			// vLLM renamed reasoning_content to reasoning (PR #27752) and later
			// dropped the old name; SGLang and llama.cpp still use reasoning_content.
			case "reasoning_content":
				reasoningContent = v.Str
			case "reasoning":
				reasoning = v.Str
			}
			return true
		}
		// tool_calls: null (sent beside content by some proxies) is no call;
		// only an array's objects are fragments. gjson's ForEach hands a
		// non-array to its callback as one element, which made a phantom
		// call 0 with no name out of a null.
		if key.Str == "tool_calls" && v.IsArray() {
			v.ForEach(func(_, tc gjson.Result) bool {
				if !tc.IsObject() {
					return true
				}
				d.ToolCalls = append(d.ToolCalls, ToolCallDelta{
					Index: int(tc.Get("index").Int()),
					ID:    str(tc, "id"),
					Name:  str(tc, "function.name"),
					Args:  str(tc, "function.arguments"),
				})
				return true
			})
		}
		return true
	})
	if reasoningContent != "" { // a chunk carrying both names is counted once
		d.Reasoning += reasoningContent
	} else {
		d.Reasoning += reasoning
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
