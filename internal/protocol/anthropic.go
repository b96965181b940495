package protocol

import (
	"net/http"

	"github.com/tidwall/gjson"
)

// anthropicVersion is the API version sent unless the caller already set one.
const anthropicVersion = "2023-06-01"

func init() {
	Register(&Spec{
		Name:    "anthropic",
		Framing: FramingSSE,
		Path:    func(Request) string { return "/messages" },
		Prepare: func(body map[string]any, r Request) {
			setDefault(body, "stream", true)
			if r.Model != "" {
				setDefault(body, "model", r.Model)
			}
		},
		Headers: func(h http.Header, r Request) {
			if r.APIKey != "" {
				h.Set("x-api-key", r.APIKey)
			}
			if h.Get("anthropic-version") == "" {
				h.Set("anthropic-version", anthropicVersion)
			}
			streamHeaders(h, "text/event-stream")
		},
		NewDecoder:       func() Decoder { return &anthropic{} },
		OutputLimitField: "max_tokens",
		LengthFinish:     "max_tokens",
	})
}

// anthropic decodes the Messages stream: message_start, content blocks
// (text, thinking, tool_use) with their deltas, ping, message_delta with the
// stop reason and cumulative usage, message_stop (the terminal event), error.
type anthropic struct {
	prompt int64 // total input tokens, for the total of message_delta's usage
}

func (a *anthropic) Decode(ev Event, d *Delta) error {
	root, typ, err := namedEvent(ev)
	if err != nil {
		return err
	}
	switch typ {
	case "message_start":
		msg := root.Get("message")
		d.Model = str(msg, "model")
		if u := msg.Get("usage"); u.IsObject() {
			// message_start's output_tokens is a placeholder (often 1), not a
			// count: reporting it would pass for the answer's length if the
			// stream broke before message_delta.
			d.Usage = anthropicUsage(u, false, 0)
			a.prompt = d.Usage.PromptTokens
		}
	case "content_block_start":
		anthropicBlockStart(root, d)
	case "content_block_delta":
		anthropicBlockDelta(root, d)
	case "message_delta":
		// stop_reason is here, but message_stop is what declares the end.
		d.FinishReason = str(root, "delta.stop_reason")
		if u := root.Get("usage"); u.IsObject() {
			// Every field is documented as cumulative: the latest value is the
			// total so far (several message_delta events with server tools).
			d.Usage = anthropicUsage(u, true, a.prompt)
			a.prompt = d.Usage.PromptTokens
			d.UsageCumulative = true
		}
	case "message_stop":
		d.Terminal = true
	case "error":
		e := root.Get("error")
		d.Err = &StreamError{Message: orRaw(str(e, "message"), root), Code: str(e, "type")}
	}
	// ping, content_block_stop and event types added later carry nothing.
	return nil
}

func anthropicBlockStart(root gjson.Result, d *Delta) {
	block := root.Get("content_block")
	index := int(root.Get("index").Int())
	switch str(block, "type") {
	case "text":
		d.Text = str(block, "text")
	case "thinking":
		d.Reasoning = str(block, "thinking")
		if sig := str(block, "signature"); sig != "" {
			d.Signatures = append(d.Signatures, Signature{Kind: SignedThinking, Value: sig})
		}
	case "redacted_thinking":
		// Arrives whole: no delta type carries it.
		d.Signatures = append(d.Signatures, Signature{Kind: SignedRedacted, Value: str(block, "data")})
	case "tool_use", "server_tool_use":
		// input is {} here; the arguments come as input_json_delta fragments.
		d.ToolCalls = append(d.ToolCalls, ToolCallDelta{Index: index, ID: str(block, "id"), Name: str(block, "name")})
	}
}

func anthropicBlockDelta(root gjson.Result, d *Delta) {
	delta := root.Get("delta")
	switch str(delta, "type") {
	case "text_delta":
		d.Text = str(delta, "text")
	case "thinking_delta":
		d.Reasoning = str(delta, "thinking")
	case "signature_delta":
		// Not output text, but the thinking block goes back only with it.
		d.Signatures = append(d.Signatures, Signature{Kind: SignedThinking, Value: str(delta, "signature")})
	case "input_json_delta":
		if args := str(delta, "partial_json"); args != "" {
			d.ToolCalls = append(d.ToolCalls, ToolCallDelta{Index: int(root.Get("index").Int()), Args: args})
		}
	}
	// citations_delta is not output text.
}

// anthropicUsage converts to the OpenAI meaning used everywhere else: prompt
// tokens include cached ones. Anthropic's input_tokens excludes them, total
// input = input + cache_creation + cache_read. message_delta usually repeats
// no input field, so the prompt known from message_start (knownPrompt) stands.
// Anthropic reports no separate thinking count: ReasoningTokens stays 0.
func anthropicUsage(u gjson.Result, withOutput bool, knownPrompt int64) *Usage {
	read, reported := cachedCount(u, "cache_read_input_tokens")
	prompt := addCounts(nonNegInt(u, "input_tokens"), nonNegInt(u, "cache_creation_input_tokens"), read)
	if prompt == 0 {
		prompt = knownPrompt
	}
	out := &Usage{PromptTokens: prompt, CachedTokens: read, CachedReported: reported}
	if withOutput {
		out.CompletionTokens = nonNegInt(u, "output_tokens")
	}
	if prompt > 0 && out.CompletionTokens > 0 {
		out.TotalTokens = addCounts(prompt, out.CompletionTokens)
	}
	return out
}
