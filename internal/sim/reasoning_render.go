package sim

import (
	"strconv"
	"strings"
	"time"
)

// Reasoning in each protocol's stream (reasoning.go), before the answer's
// first text or tool-call event. The tool-call streams embed their text
// streams and reason the same way; the events that close the reasoning
// (Anthropic's signature_delta, Responses' reasoning item done) go out
// when the answer begins.

// OpenAI chat: delta.reasoning_content, or delta.reasoning as vLLM streams
// it since 2026 (the model's reasoning_field).
func (c *chatStream) reason(out eventSink, text []byte, n, total int) error {
	t := c.m.think
	t.text = append(t.text, text...)
	b := append(c.begin(), `{"index":0,"delta":{"`...)
	b = append(b, t.field...)
	b = append(b, `":`...)
	b = appendJSONString(b, text)
	b = append(b, `},"logprobs":null,"finish_reason":null}`...)
	return out.event(c.end(b, total), n)
}

// appendReasoningUsage adds completion_tokens_details.reasoning_tokens to a
// chat usage object being written: the reasoning is in completion_tokens.
func appendReasoningUsage(b []byte, m *respMeta, completion int) []byte {
	if m.think == nil {
		return b
	}
	b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(min(completion, m.think.tokens)), 10)
	return append(b, '}')
}

// Ollama: message.thinking on /api/chat, thinking beside response on
// /api/generate, with empty content.
func (s *ollamaStream) reason(out eventSink, text []byte, n, _ int) error {
	s.m.think.text = append(s.m.think.text, text...)
	b := append(s.buf[:0], `{"model":`...)
	b = appendJSONString(b, s.m.model)
	b = append(b, `,"created_at":"`...)
	b = time.Now().UTC().AppendFormat(b, time.RFC3339Nano)
	if s.o.generate {
		b = append(b, `","response":"","thinking":`...)
		b = appendJSONString(b, text)
	} else {
		b = append(b, `","message":{"role":"assistant","content":"","thinking":`...)
		b = appendJSONString(b, text)
		b = append(b, '}')
	}
	b = append(b, `,"done":false}`+"\n"...)
	s.buf = b
	return out.event(b, n)
}

// Gemini: thought parts ("thought": true). The signature is on the answer's
// last part (a text answer: the finishing chunk's empty text part) or its
// first functionCall part, as Gemini 3 streams them.
func (s *geminiStream) reason(out eventSink, text []byte, n, total int) error {
	s.m.think.text = append(s.m.think.text, text...)
	return s.frame(out, func(b []byte) []byte {
		b = append(b, `{"candidates":[{"content":{"parts":[{"text":`...)
		b = appendJSONString(b, text)
		b = append(b, `,"thought":true}`...)
		return appendGeminiTail(b, s.m, "", total)
	}, n)
}

// geminiSignature is the thoughtSignature of an answer that reasoned, on a
// part of kind ("text" or "call").
func geminiSignature(m *respMeta, kind string) string { return m.think.sign("gemini-" + kind) }

// geminiCounts splits a usage count: candidatesTokenCount leaves the
// thoughts out, thoughtsTokenCount holds them (Google's meaning).
func geminiCounts(m *respMeta, total int) (candidates, thoughts int) {
	if m.think == nil {
		return total, 0
	}
	thoughts = min(total, m.think.tokens)
	return total - thoughts, thoughts
}

// Anthropic: a thinking block (thinking_delta pieces, then its
// signature_delta just before content_block_stop) and, when asked, a
// redacted_thinking block, then the text or tool_use blocks.
func (a *anthropicStream) reason(out eventSink, text []byte, n, _ int) error {
	if err := a.messageStart(out); err != nil {
		return err
	}
	if !a.thinking {
		a.thinking = true
		b := a.ev.typed("content_block_start")
		b = append(b, `,"index":`...)
		b = strconv.AppendInt(b, int64(a.next), 10)
		b = append(b, `,"content_block":{"type":"thinking","thinking":"","signature":""}}`...)
		if err := out.event(a.ev.end(b), 0); err != nil {
			return err
		}
		if err := out.event(a.ev.end(append(a.ev.typed("ping"), '}')), 0); err != nil {
			return err
		}
	}
	a.m.think.text = append(a.m.think.text, text...)
	b := a.ev.typed("content_block_delta")
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(a.next), 10)
	b = append(b, `,"delta":{"type":"thinking_delta","thinking":`...)
	b = appendJSONString(b, text)
	return out.event(a.ev.end(append(b, "}}"...)), n)
}

// endThinking closes an open thinking block with its signature and adds the
// redacted block when asked; the answer's blocks follow.
func (a *anthropicStream) endThinking(out eventSink) error {
	if !a.thinking {
		return nil
	}
	a.thinking = false
	b := a.ev.typed("content_block_delta")
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(a.next), 10)
	b = append(b, `,"delta":{"type":"signature_delta","signature":`...)
	b = appendJSONString(b, a.m.think.sign(anthropicThinkingSig))
	if err := out.event(a.ev.end(append(b, "}}"...)), 0); err != nil {
		return err
	}
	if err := a.blockStop(out); err != nil {
		return err
	}
	if !a.m.think.redacted {
		return nil
	}
	b = a.ev.typed("content_block_start")
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(a.next), 10)
	b = append(b, `,"content_block":{"type":"redacted_thinking","data":`...)
	b = appendJSONString(b, a.m.think.redactedData())
	if err := out.event(a.ev.end(append(b, "}}"...)), 0); err != nil {
		return err
	}
	return a.blockStop(out)
}

// blockStop closes content block a.next; the next block takes the next index.
func (a *anthropicStream) blockStop(out eventSink) error {
	b := a.ev.typed("content_block_stop")
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(a.next), 10)
	a.next++
	return out.event(a.ev.end(append(b, '}')), 0)
}

// anthropicThinkingSig is the kind a thinking block's signature signs.
const anthropicThinkingSig = "anthropic-thinking"

// Responses: a reasoning output item (output_item.added, a summary part
// with reasoning_summary_text.delta pieces, their *.done events, then
// output_item.done with the summary and encrypted_content), before the
// message or function_call items.
func (r *responsesStream) reason(out eventSink, text []byte, n, _ int) error {
	id := reasoningItemID(r.m)
	if !r.reasoning {
		r.reasoning = true
		if err := r.emit(out, "response.output_item.added", struct {
			OutputIndex int `json:"output_index"`
			Item        any `json:"item"`
		}{0, map[string]any{"id": id, "type": "reasoning", "summary": []any{}}}); err != nil {
			return err
		}
		if err := r.emit(out, "response.reasoning_summary_part.added", struct {
			summaryRef
			Part summaryPart `json:"part"`
		}{summaryRef{ItemID: id}, summaryPart{Type: "summary_text"}}); err != nil {
			return err
		}
	}
	r.m.think.text = append(r.m.think.text, text...)
	b := r.typed("response.reasoning_summary_text.delta")
	b = append(b, `,"item_id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"output_index":0,"summary_index":0,"delta":`...)
	b = appendJSONString(b, text)
	return out.event(r.ev.end(append(b, '}')), n)
}

type summaryRef struct {
	ItemID       string `json:"item_id"`
	OutputIndex  int    `json:"output_index"`
	SummaryIndex int    `json:"summary_index"`
}

type summaryPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// reasoningItem is the done reasoning output item.
type reasoningItem struct {
	ID               string        `json:"id"`
	Type             string        `json:"type"`
	Summary          []summaryPart `json:"summary"`
	EncryptedContent string        `json:"encrypted_content"`
}

func reasoningItemID(m *respMeta) string { return "rs_" + strings.TrimPrefix(m.id, "resp_") }

// endReasoning closes the reasoning item; the answer's items follow it.
func (r *responsesStream) endReasoning(out eventSink) error {
	if !r.reasoning {
		return nil
	}
	r.reasoning = false
	t := r.m.think
	text := string(t.text)
	ref := summaryRef{ItemID: reasoningItemID(r.m)}
	if err := r.emit(out, "response.reasoning_summary_text.done", struct {
		summaryRef
		Text string `json:"text"`
	}{ref, text}); err != nil {
		return err
	}
	if err := r.emit(out, "response.reasoning_summary_part.done", struct {
		summaryRef
		Part summaryPart `json:"part"`
	}{ref, summaryPart{Type: "summary_text", Text: text}}); err != nil {
		return err
	}
	item := reasoningItem{ID: ref.ItemID, Type: "reasoning", Summary: []summaryPart{{Type: "summary_text", Text: text}},
		EncryptedContent: t.sign("responses-reasoning")}
	r.done = &item
	r.items = 1
	return r.emit(out, "response.output_item.done", struct {
		OutputIndex int           `json:"output_index"`
		Item        reasoningItem `json:"item"`
	}{0, item})
}
