package sim

import (
	"strconv"
	"strings"
)

// Tool-call answers in the OpenAI streams. Chat: delta.tool_calls keyed by
// index, the first fragment of a call carrying id, type and name with empty
// arguments, the next ones argument pieces; finish_reason "tool_calls".
// Responses: a function_call output item per call (output_item.added,
// function_call_arguments.delta…, .done, output_item.done), then
// response.completed with the calls as its output.

func (openAIChat) toolStream(m *respMeta, plan *toolPlan) streamRenderer {
	return &chatToolStream{chatStream: chatStream{openAIChunks: newOpenAIChunks(m, "chat.completion.chunk")}, plan: plan}
}

type chatToolStream struct {
	chatStream
	plan *toolPlan
}

func (c *chatToolStream) tokens(out eventSink, _ []byte, n, total int) error {
	for _, s := range c.plan.spans(total-n, total) {
		call := c.plan.calls[s.call]
		if s.first {
			b := append(c.begin(), `{"index":0,"delta":{"tool_calls":[{"index":`...)
			b = strconv.AppendInt(b, int64(s.call), 10)
			b = append(b, `,"id":`...)
			b = appendJSONString(b, call.ID)
			b = append(b, `,"type":"function","function":{"name":`...)
			b = appendJSONString(b, call.Name)
			b = append(b, `,"arguments":""}}]},"logprobs":null,"finish_reason":null}`...)
			if err := out.event(c.end(b, total), 0); err != nil {
				return err
			}
		}
		b := append(c.begin(), `{"index":0,"delta":{"tool_calls":[{"index":`...)
		b = strconv.AppendInt(b, int64(s.call), 10)
		b = append(b, `,"function":{"arguments":`...)
		b = appendJSONString(b, s.text)
		b = append(b, `}}]},"logprobs":null,"finish_reason":null}`...)
		if err := out.event(c.end(b, total), s.tokens); err != nil {
			return err
		}
	}
	return nil
}

func (openAIResponses) toolStream(m *respMeta, plan *toolPlan) streamRenderer {
	return &responsesToolStream{responsesStream: responsesStream{m: m}, plan: plan}
}

type responsesToolStream struct {
	responsesStream
	plan *toolPlan
}

// functionCallItem is a function_call output item.
type functionCallItem struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

func (r *responsesToolStream) item(i int, status, args string) functionCallItem {
	c := r.plan.calls[i]
	return functionCallItem{
		ID: "fc_" + strings.TrimPrefix(c.ID, "call_"), Type: "function_call", Status: status,
		Arguments: args, CallID: c.ID, Name: c.Name,
	}
}

// start writes response.created and response.in_progress; each call's item
// is added when its first fragment comes.
func (r *responsesToolStream) start(out eventSink) error {
	resp := newResponseObject(r.m, "in_progress")
	for _, name := range []string{"response.created", "response.in_progress"} {
		if err := r.emit(out, name, struct {
			Response responseObject `json:"response"`
		}{resp}); err != nil {
			return err
		}
	}
	return nil
}

type functionCallRef struct {
	ItemID      string `json:"item_id"`
	OutputIndex int    `json:"output_index"`
}

func (r *responsesToolStream) tokens(out eventSink, _ []byte, n, total int) error {
	if err := r.endReasoning(out); err != nil { // the calls' items follow the reasoning item
		return err
	}
	for _, s := range r.plan.spans(total-n, total) {
		if s.first {
			if err := r.emit(out, "response.output_item.added", struct {
				OutputIndex int              `json:"output_index"`
				Item        functionCallItem `json:"item"`
			}{r.items + s.call, r.item(s.call, "in_progress", "")}); err != nil {
				return err
			}
		}
		b := r.typed("response.function_call_arguments.delta")
		b = append(b, `,"item_id":`...)
		b = appendJSONString(b, r.item(s.call, "", "").ID)
		b = append(b, `,"output_index":`...)
		b = strconv.AppendInt(b, int64(r.items+s.call), 10)
		b = append(b, `,"delta":`...)
		b = appendJSONString(b, s.text)
		if err := out.event(r.ev.end(append(b, '}')), s.tokens); err != nil {
			return err
		}
		if s.last {
			if err := r.callDone(out, s.call); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *responsesToolStream) callDone(out eventSink, i int) error {
	args := r.plan.calls[i].Args
	it := r.item(i, "completed", args)
	if err := r.emit(out, "response.function_call_arguments.done", struct {
		functionCallRef
		Arguments string `json:"arguments"`
	}{functionCallRef{it.ID, r.items + i}, args}); err != nil {
		return err
	}
	return r.emit(out, "response.output_item.done", struct {
		OutputIndex int              `json:"output_index"`
		Item        functionCallItem `json:"item"`
	}{r.items + i, it})
}

// finish writes response.completed (response.incomplete when max tokens cut
// the answer) with the calls as the response's output.
func (r *responsesToolStream) finish(out eventSink, reason string, total int) error {
	if err := r.endReasoning(out); err != nil { // an answer that only reasoned
		return err
	}
	resp := newResponseObject(r.m, "")
	resp.ended(r.m, "", reason, total)
	items := make([]any, 0, len(r.plan.calls)+1)
	if r.done != nil {
		items = append(items, *r.done)
	}
	for i := range r.plan.calls {
		items = append(items, r.item(i, "completed", r.plan.calls[i].Args))
	}
	if r.m.keep != nil {
		r.m.keep(items) // function_call items read back as input items
	}
	name := "response.completed"
	if resp.Status == "incomplete" {
		name = "response.incomplete"
	}
	return r.emit(out, name, struct {
		Response struct {
			responseObject
			Output []any `json:"output"`
		} `json:"response"`
	}{struct {
		responseObject
		Output []any `json:"output"`
	}{resp, items}})
}
