package conversation

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/jsondepth"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// Each protocol's history, in the shape its API documents for a request:
// the assistant's tool calls and the tools' results go back where that API
// reads them, or the next answer would not see them.

type encoder func(h *History, body map[string]any)

//nolint:gochecknoglobals // read-only tables
var (
	encoders = map[string]encoder{
		"openai-chat":      openAIChat,
		"ollama":           ollama,
		"anthropic":        anthropic,
		"gemini":           gemini,
		"openai-responses": responses,
	}
	// sendsReasoning are the protocols whose reasoning can go back: as a
	// field of the assistant message (openai-chat, ollama), or as the signed
	// blocks and parts the server streamed (anthropic, gemini).
	sendsReasoning = map[string]bool{"openai-chat": true, "ollama": true, "anthropic": true, "gemini": true, "openai-responses": true}
)

func supported() string {
	names := make([]string, 0, len(encoders))
	for n := range encoders {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// arguments reads a tool call's arguments as JSON for the APIs that take an
// object; arguments that are not a JSON object go back as the string the
// model streamed, under "_raw", rather than being lost. Arguments nested
// past the limit of every JSON the client reads from a server go back the
// same way, as text.
func arguments(s string) map[string]any {
	m := map[string]any{}
	if strings.TrimSpace(s) == "" {
		return m
	}
	if !jsondepth.Within(s, jsondepth.Limit) {
		return map[string]any{"_raw": s}
	}
	if err := json.Unmarshal([]byte(s), &m); err != nil || m == nil {
		return map[string]any{"_raw": s}
	}
	return m
}

func openAIChat(h *History, body map[string]any) {
	msgs := make([]any, 0, len(h.msgs)+1)
	if h.o.System != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": h.o.System})
	}
	for _, m := range h.msgs {
		switch m.Role {
		case RoleUser:
			msgs = append(msgs, map[string]any{"role": "user", "content": m.Text})
		case RoleAssistant:
			a := map[string]any{"role": "assistant", "content": m.Text}
			if len(m.ToolCalls) > 0 {
				calls := make([]any, len(m.ToolCalls))
				for i, c := range m.ToolCalls {
					calls[i] = map[string]any{"id": c.ID, "type": "function",
						"function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
				}
				a["tool_calls"] = calls
				if m.Text == "" {
					a["content"] = nil
				}
			}
			if h.o.Reasoning == ReasoningSend && m.Reasoning != "" {
				a[h.o.ReasoningField] = m.Reasoning
			}
			msgs = append(msgs, a)
		case RoleTool:
			for _, r := range m.Results {
				msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": r.ID, "content": r.Content})
			}
		}
	}
	body["messages"] = msgs
}

func ollama(h *History, body map[string]any) {
	msgs := make([]any, 0, len(h.msgs)+1)
	if h.o.System != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": h.o.System})
	}
	for _, m := range h.msgs {
		switch m.Role {
		case RoleUser:
			msgs = append(msgs, map[string]any{"role": "user", "content": m.Text})
		case RoleAssistant:
			a := map[string]any{"role": "assistant", "content": m.Text}
			if len(m.ToolCalls) > 0 {
				calls := make([]any, len(m.ToolCalls))
				for i, c := range m.ToolCalls {
					calls[i] = map[string]any{"function": map[string]any{"name": c.Name, "arguments": arguments(c.Arguments)}}
				}
				a["tool_calls"] = calls
			}
			if h.o.Reasoning == ReasoningSend && m.Reasoning != "" {
				a["thinking"] = m.Reasoning
			}
			msgs = append(msgs, a)
		case RoleTool:
			for _, r := range m.Results {
				msgs = append(msgs, map[string]any{"role": "tool", "tool_name": r.Name, "content": r.Content})
			}
		}
	}
	body["messages"] = msgs
}

func anthropic(h *History, body map[string]any) {
	if h.o.System != "" {
		body["system"] = h.o.System
	}
	msgs := make([]any, 0, len(h.msgs))
	for _, m := range h.msgs {
		switch m.Role {
		case RoleUser:
			msgs = append(msgs, map[string]any{"role": "user", "content": m.Text})
		case RoleAssistant:
			blocks := []any{}
			if h.o.Reasoning == ReasoningSend {
				blocks = anthropicThinking(m.Thoughts)
			}
			if m.Text != "" {
				blocks = append(blocks, map[string]any{"type": "text", "text": m.Text})
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.ID, "name": c.Name, "input": arguments(c.Arguments)})
			}
			msgs = append(msgs, map[string]any{"role": "assistant", "content": blocks})
		case RoleTool:
			// Anthropic takes tool results as a user message of
			// tool_result blocks, all of one answer's in one message.
			blocks := make([]any, len(m.Results))
			for i, r := range m.Results {
				blocks[i] = map[string]any{"type": "tool_result", "tool_use_id": r.ID, "content": r.Content}
			}
			msgs = append(msgs, map[string]any{"role": "user", "content": blocks})
		}
	}
	body["messages"] = msgs
}

// anthropicThinking is an answer's thinking as Anthropic reads it back: each
// signed thinking block with its own text and signature, each redacted block
// with its data, in the order they streamed, before the text and tool_use
// blocks. Thinking the server did not sign is left out: the API refuses a
// thinking block without its signature.
func anthropicThinking(ts []Thought) []any {
	blocks := make([]any, 0, len(ts)+2)
	for _, t := range ts {
		switch t.Kind {
		case protocol.SignedThinking:
			blocks = append(blocks, map[string]any{"type": "thinking", "thinking": t.Text, "signature": t.Signature})
		case protocol.SignedRedacted:
			blocks = append(blocks, map[string]any{"type": "redacted_thinking", "data": t.Signature})
		}
	}
	return blocks
}

func gemini(h *History, body map[string]any) {
	if h.o.System != "" {
		body["systemInstruction"] = map[string]any{"parts": []any{map[string]any{"text": h.o.System}}}
	}
	contents := make([]any, 0, len(h.msgs))
	for _, m := range h.msgs {
		switch m.Role {
		case RoleUser:
			contents = append(contents, map[string]any{"role": "user", "parts": []any{map[string]any{"text": m.Text}}})
		case RoleAssistant:
			var parts []any
			if h.o.Reasoning == ReasoningSend {
				parts = geminiParts(m)
			} else {
				parts = []any{}
				if m.Text != "" {
					parts = append(parts, map[string]any{"text": m.Text})
				}
				for _, c := range m.ToolCalls {
					parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.Name, "args": arguments(c.Arguments)}})
				}
			}
			contents = append(contents, map[string]any{"role": "model", "parts": parts})
		case RoleTool:
			parts := make([]any, len(m.Results))
			for i, r := range m.Results {
				parts[i] = map[string]any{"functionResponse": map[string]any{"name": r.Name, "response": map[string]any{"result": r.Content}}}
			}
			contents = append(contents, map[string]any{"role": "user", "parts": parts})
		}
	}
	body["contents"] = contents
}

// geminiParts is an answer as Gemini reads it back with its reasoning: the
// thought parts (each signed one with its signature, then the thought text
// no signature covered), the text part and the functionCall parts, each
// with the thoughtSignature it streamed on.
func geminiParts(m Message) []any {
	parts := []any{}
	var textSig string
	callSig := map[int]string{}
	covered := 0
	for _, t := range m.Thoughts {
		switch t.Kind {
		case protocol.SignedThought:
			parts = append(parts, map[string]any{"text": t.Text, "thought": true, "thoughtSignature": t.Signature})
			covered += len(t.Text)
		case protocol.SignedText:
			textSig = t.Signature
		case protocol.SignedCall:
			callSig[t.Call] = t.Signature
		}
	}
	if covered < len(m.Reasoning) {
		parts = append(parts, map[string]any{"text": m.Reasoning[covered:], "thought": true})
	}
	if m.Text != "" || textSig != "" {
		p := map[string]any{"text": m.Text}
		if textSig != "" {
			p["thoughtSignature"] = textSig
		}
		parts = append(parts, p)
	}
	for i, c := range m.ToolCalls {
		p := map[string]any{"functionCall": map[string]any{"name": c.Name, "args": arguments(c.Arguments)}}
		if sig, ok := callSig[i]; ok {
			p["thoughtSignature"] = sig
		}
		parts = append(parts, p)
	}
	return parts
}

// responses sends the whole history as input items (stateless: no
// server-side store needed), or with Chain only the messages after the
// previous answer, naming it as previous_response_id. instructions go on
// every turn: the server does not carry them over from the previous one.
func responses(h *History, body map[string]any) {
	if h.o.System != "" {
		body["instructions"] = h.o.System
	}
	msgs := h.msgs
	if h.o.Chain && h.previous != "" {
		body["previous_response_id"] = h.previous
		msgs = h.msgs[h.unsent:]
	}
	items := make([]any, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case RoleUser:
			items = append(items, map[string]any{"role": "user", "content": m.Text})
		case RoleAssistant:
			if h.o.Reasoning == ReasoningSend {
				for _, t := range m.Thoughts {
					if t.Kind == protocol.SignedItem {
						items = append(items, json.RawMessage(t.Signature)) // the reasoning item as it streamed
					}
				}
			}
			if m.Text != "" {
				items = append(items, map[string]any{"role": "assistant", "content": m.Text})
			}
			for _, c := range m.ToolCalls {
				items = append(items, map[string]any{"type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": c.Arguments})
			}
		case RoleTool:
			for _, r := range m.Results {
				items = append(items, map[string]any{"type": "function_call_output", "call_id": r.ID, "output": r.Content})
			}
		}
	}
	body["input"] = items
}
