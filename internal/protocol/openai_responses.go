package protocol

import "github.com/tidwall/gjson"

func init() {
	Register(&Spec{
		Name:    "openai-responses",
		Framing: FramingSSE,
		Path:    func(Request) string { return "/responses" },
		// Usage always comes with response.completed: no stream_options here
		// (the Responses API rejects them).
		Prepare: func(body map[string]any, r Request) {
			setDefault(body, "stream", true)
			if r.Model != "" {
				setDefault(body, "model", r.Model)
			}
		},
		Headers:          openAIHeaders,
		NewDecoder:       func() Decoder { return &openAIResponses{} },
		OutputLimitField: "max_output_tokens",
		LengthFinish:     "max_output_tokens",
	})
}

// openAIResponses decodes the Responses API stream: named events, text in
// response.output_text.delta, usage and the end on response.completed (or
// response.incomplete), failures in error and response.failed; no [DONE].
type openAIResponses struct{}

func (*openAIResponses) Decode(ev Event, d *Delta) error {
	root, typ, err := namedEvent(ev)
	if err != nil {
		return err
	}
	switch typ {
	case "response.created", "response.in_progress", "response.queued":
		d.Model = str(root, "response.model")
		d.ResponseID = str(root, "response.id")
	case "response.output_text.delta", "response.refusal.delta":
		d.Text = str(root, "delta")
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		d.Reasoning = str(root, "delta")
	case "response.output_item.added":
		if item := root.Get("item"); str(item, "type") == "function_call" {
			// call_id is what a tool result must quote back; the argument
			// deltas name only the output index, which keys the call.
			d.ToolCalls = append(d.ToolCalls, ToolCallDelta{
				Index: int(root.Get("output_index").Int()),
				ID:    str(item, "call_id"),
				Name:  str(item, "name"),
				Args:  str(item, "arguments"),
			})
		}
	case "response.output_item.done":
		if item := root.Get("item"); str(item, "type") == "reasoning" {
			d.Signatures = append(d.Signatures, Signature{Kind: SignedItem, Value: item.Raw})
		}
	case "response.function_call_arguments.delta":
		if args := str(root, "delta"); args != "" {
			d.ToolCalls = append(d.ToolCalls, ToolCallDelta{Index: int(root.Get("output_index").Int()), Args: args})
		}
	case "response.completed":
		d.ResponseID = str(root, "response.id")
		responsesEnd(root.Get("response"), d, "completed")
	case "response.incomplete":
		// The server ended the answer on purpose (max_output_tokens, content
		// filter): complete, with the reason as its finish reason.
		resp := root.Get("response")
		responsesEnd(resp, d, str(resp, "incomplete_details.reason"))
	case "response.failed":
		e := root.Get("response.error")
		d.Err = &StreamError{Message: orRaw(str(e, "message"), root), Code: str(e, "code")}
	case "error":
		d.Err = &StreamError{Message: orRaw(str(root, "message"), root), Code: str(root, "code")}
	}
	// The *.done events repeat text already received: never count it twice.
	return nil
}

func responsesEnd(resp gjson.Result, d *Delta, reason string) {
	if reason == "" {
		reason = str(resp, "status")
	}
	if reason == "" {
		reason = "completed"
	}
	setFinish(d, reason)
	if m := str(resp, "model"); m != "" {
		d.Model = m
	}
	if u := resp.Get("usage"); u.IsObject() {
		cached, reported := cachedCount(u, "input_tokens_details.cached_tokens")
		d.Usage = &Usage{
			PromptTokens:     nonNegInt(u, "input_tokens"),
			CompletionTokens: nonNegInt(u, "output_tokens"),
			CachedTokens:     cached,
			CachedReported:   reported,
			ReasoningTokens:  nonNegInt(u, "output_tokens_details.reasoning_tokens"),
			TotalTokens:      nonNegInt(u, "total_tokens"),
		}
	}
}
