package protocol

import (
	"net/http"

	"github.com/tidwall/gjson"
)

func init() {
	Register(&Spec{
		Name:    "ollama",
		Framing: FramingNDJSON,
		Path: func(r Request) string {
			if r.PromptOnly {
				return "/api/generate"
			}
			return "/api/chat"
		},
		Prepare: func(body map[string]any, r Request) {
			setDefault(body, "stream", true)
			if r.Model != "" {
				setDefault(body, "model", r.Model)
			}
		},
		Headers: func(h http.Header, r Request) {
			bearer(h, r) // ollama.com and authenticating proxies; a local server ignores it
			streamHeaders(h, "application/x-ndjson")
		},
		NewDecoder:       func() Decoder { return &ollama{} },
		OutputLimitField: "options.num_predict",
		LengthFinish:     "length",
	})
}

// ollama decodes Ollama's native NDJSON lines (/api/chat: message.content and
// message.thinking; /api/generate: response and thinking); the last line has
// done:true, the counts and the durations in nanoseconds.
type ollama struct {
	tools int // tool calls seen: Ollama sends each whole, without an index
}

func (o *ollama) Decode(ev Event, d *Delta) error {
	root, err := parseObject(ev.Data)
	if err != nil {
		return err
	}
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		d.Err = openAIError(e)
		return nil
	}
	d.Model = str(root, "model")
	if msg := root.Get("message"); msg.IsObject() {
		d.Text = str(msg, "content")
		d.Reasoning = str(msg, "thinking")
		msg.Get("tool_calls").ForEach(func(_, tc gjson.Result) bool {
			index := o.tools
			if i := tc.Get("function.index"); i.Type == gjson.Number {
				index = int(i.Int())
			}
			o.tools++
			d.ToolCalls = append(d.ToolCalls, ToolCallDelta{
				Index: index,
				ID:    str(tc, "id"),
				Name:  str(tc, "function.name"),
				Args:  rawArgs(tc.Get("function.arguments")),
			})
			return true
		})
	} else {
		d.Text = str(root, "response")
		d.Reasoning = str(root, "thinking")
	}
	if !root.Get("done").Bool() {
		return nil
	}
	if reason := str(root, "done_reason"); reason != "" {
		setFinish(d, reason)
	} else {
		endUnnamed(d) // servers before done_reason existed
	}
	prompt, out := nonNegInt(root, "prompt_eval_count"), nonNegInt(root, "eval_count")
	if prompt > 0 || out > 0 {
		// prompt_eval_cached_count: the cached part of the prompt (Ollama
		// since Aug 2026); older servers say nothing of their cache.
		cached, reported := cachedCount(root, "prompt_eval_cached_count")
		d.Usage = &Usage{PromptTokens: prompt, CompletionTokens: out, TotalTokens: addCounts(prompt, out),
			CachedTokens: cached, CachedReported: reported}
	}
	d.ServerTimings = ollamaTimings(root)
	return nil
}

// ollamaTimings converts the final line's nanosecond durations to the phase
// names used downstream, in milliseconds. load_duration (model load, cold
// start) is kept apart: it inflates TTFT but is neither prefill nor decode.
func ollamaTimings(root gjson.Result) map[string]float64 {
	out := map[string]float64{}
	for field, phase := range map[string]string{
		"load_duration":        "load",
		"prompt_eval_duration": "prefill",
		"eval_duration":        "decode",
		"total_duration":       "total",
	} {
		if v := root.Get(field); v.Type == gjson.Number {
			out[phase] = v.Float() / 1e6
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
