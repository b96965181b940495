package sim

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Tool-call answers in the native streams. Anthropic: a tool_use content
// block per call (content_block_start with id and name, input_json_delta
// pieces, content_block_stop), stop_reason "tool_use". Gemini and Ollama send
// a call whole, its arguments an object, in one event: the event goes out
// when the call's last argument token is generated and carries all of them.

func (anthropic) toolStream(m *respMeta, plan *toolPlan) streamRenderer {
	return &anthropicToolStream{anthropicStream: anthropicStream{m: m}, plan: plan}
}

type anthropicToolStream struct {
	anthropicStream
	plan *toolPlan
}

func (a *anthropicToolStream) opening(out eventSink) error {
	if a.started {
		return nil
	}
	a.started = true // the inherited fail and malformed write no text block
	if err := a.messageStart(out); err != nil {
		return err
	}
	return a.endThinking(out) // the calls' blocks follow the thinking's
}

func (a *anthropicToolStream) tokens(out eventSink, _ []byte, n, total int) error {
	if err := a.opening(out); err != nil {
		return err
	}
	for _, s := range a.plan.spans(total-n, total) {
		if s.first {
			c := a.plan.calls[s.call]
			b := a.ev.typed("content_block_start")
			b = append(b, `,"index":`...)
			b = strconv.AppendInt(b, int64(a.next+s.call), 10)
			b = append(b, `,"content_block":{"type":"tool_use","id":`...)
			b = appendJSONString(b, "toolu_"+strings.TrimPrefix(c.ID, "call_"))
			b = append(b, `,"name":`...)
			b = appendJSONString(b, c.Name)
			if err := out.event(a.ev.end(append(b, `,"input":{}}}`...)), 0); err != nil {
				return err
			}
		}
		b := a.ev.typed("content_block_delta")
		b = append(b, `,"index":`...)
		b = strconv.AppendInt(b, int64(a.next+s.call), 10)
		b = append(b, `,"delta":{"type":"input_json_delta","partial_json":`...)
		b = appendJSONString(b, s.text)
		if err := out.event(a.ev.end(append(b, "}}"...)), s.tokens); err != nil {
			return err
		}
		if s.last {
			b = a.ev.typed("content_block_stop")
			b = append(b, `,"index":`...)
			b = strconv.AppendInt(b, int64(a.next+s.call), 10)
			if err := out.event(a.ev.end(append(b, '}')), 0); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *anthropicToolStream) finish(out eventSink, reason string, total int) error {
	if err := a.opening(out); err != nil {
		return err
	}
	return a.messageEnd(out, reason, total)
}

// fail and malformed go through the inherited methods, which call the
// embedded opening: mark the message started the same way.
func (a *anthropicToolStream) fail(out eventSink, e *apiError, total int) error {
	if err := a.opening(out); err != nil {
		return err
	}
	return a.anthropicStream.fail(out, e, total)
}

func (a *anthropicToolStream) malformed(out eventSink) error {
	if err := a.opening(out); err != nil {
		return err
	}
	return a.anthropicStream.malformed(out)
}

// objectArgs is a call's arguments for the APIs that send an object; an
// argument string that is not one (the malformed_arguments fault, or a
// call cut by max tokens) goes as a JSON string, which no client reads as
// the object it expects.
func objectArgs(args string) []byte {
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) == nil && v != nil {
		return []byte(args)
	}
	return appendJSONString(nil, args)
}

// wholeCalls gathers the calls whose last token is in [from, to) and the
// tokens each event carries (a call's tokens go with its event).
func (p *toolPlan) wholeCalls(from, to int, pending *int) (calls []int, tokens []int) {
	for _, s := range p.spans(from, to) {
		*pending += s.tokens
		if s.last {
			calls = append(calls, s.call)
			tokens = append(tokens, *pending)
			*pending = 0
		}
	}
	return calls, tokens
}

func (gemini) toolStream(m *respMeta, plan *toolPlan) streamRenderer {
	return &geminiToolStream{geminiStream: geminiStream{m: m}, plan: plan}
}

type geminiToolStream struct {
	geminiStream
	plan    *toolPlan
	pending int
}

func (s *geminiToolStream) tokens(out eventSink, _ []byte, n, total int) error {
	calls, tokens := s.plan.wholeCalls(total-n, total, &s.pending)
	for i, ci := range calls {
		c := s.plan.calls[ci]
		var sig string
		if ci == 0 && s.m.think != nil { // a step's signature is on its first call
			sig = geminiSignature(s.m, "call")
		}
		err := s.frame(out, func(b []byte) []byte {
			b = append(b, `{"candidates":[{"content":{"parts":[{"functionCall":{"name":`...)
			b = appendJSONString(b, c.Name)
			b = append(b, `,"args":`...)
			b = append(b, objectArgs(c.Args)...)
			b = append(b, '}')
			if sig != "" {
				b = append(b, `,"thoughtSignature":`...)
				b = appendJSONString(b, sig)
			}
			b = append(b, '}')
			return appendGeminiTail(b, s.m, "", total)
		}, tokens[i])
		if err != nil {
			return err
		}
	}
	return nil
}

// finish ends a tool-call answer with an empty text part: its signature
// went with its first call.
func (s *geminiToolStream) finish(out eventSink, reason string, total int) error {
	return s.frame(out, func(b []byte) []byte {
		return appendGeminiResponse(b, s.m, nil, geminiFinishReason(reason), total)
	}, 0)
}

func (o ollama) toolStream(m *respMeta, plan *toolPlan) streamRenderer {
	return &ollamaToolStream{ollamaStream: ollamaStream{o: o, m: m}, plan: plan}
}

type ollamaToolStream struct {
	ollamaStream
	plan    *toolPlan
	pending int
}

func (s *ollamaToolStream) tokens(out eventSink, _ []byte, n, total int) error {
	calls, tokens := s.plan.wholeCalls(total-n, total, &s.pending)
	for i, ci := range calls {
		c := s.plan.calls[ci]
		b := append(s.buf[:0], `{"model":`...)
		b = appendJSONString(b, s.m.model)
		b = append(b, `,"created_at":"`...)
		b = time.Now().UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":`...)
		b = strconv.AppendInt(b, int64(ci), 10)
		b = append(b, `,"name":`...)
		b = appendJSONString(b, c.Name)
		b = append(b, `,"arguments":`...)
		b = append(b, objectArgs(c.Args)...)
		b = append(b, `}}]},"done":false}`+"\n"...)
		s.buf = b
		if err := out.event(b, tokens[i]); err != nil {
			return err
		}
	}
	return nil
}
