package protocol

import (
	"net/http"

	"github.com/tidwall/gjson"
)

func init() {
	Register(&Spec{
		Name:    "llamacpp",
		Framing: FramingSSE,
		Path:    func(Request) string { return "/completion" },
		Prepare: func(body map[string]any, r Request) {
			setDefault(body, "stream", true)
			if r.Model != "" {
				setDefault(body, "model", r.Model)
			}
		},
		Headers: func(h http.Header, r Request) {
			bearer(h, r)
			streamHeaders(h, "text/event-stream")
		},
		NewDecoder:       func() Decoder { return &llamaCpp{} },
		OutputLimitField: "n_predict",
		LengthFinish:     "limit",
	})
}

// llamaCpp decodes llama-server's native /completion stream: {"content", "stop",
// "tokens_predicted", …} events, the last with stop:true and a timings object;
// no [DONE].
//
// Builds before PR #16109 (Sept 2025) sent a streamed error as an "error:" SSE
// field, which a conformant SSE parser drops: such a stream is seen as
// truncated, with the error text lost. Newer builds send data: {"error": …}.
type llamaCpp struct {
	predicted int64 // highest tokens_predicted seen: the running output count
}

func (l *llamaCpp) Decode(ev Event, d *Delta) error {
	root, err := parseObject(ev.Data)
	if err != nil {
		return err
	}
	if e := streamedOpenAIError(root); e != nil {
		d.Err = e
		return nil
	}
	d.Model = str(root, "model")
	d.Text = str(root, "content")
	// Every event carries tokens_predicted, the tokens decoded so far: a
	// running total, so the count is exact per event.
	if p := root.Get("tokens_predicted"); p.Exists() {
		if n := nonNegInt(root, "tokens_predicted"); n > l.predicted {
			l.predicted = n
		}
		prompt := nonNegInt(root, "tokens_evaluated")
		// timings.cache_n is the prompt tokens reused from the KV cache;
		// tokens_cached is n_past, which also counts generated tokens.
		cached, reported := cachedCount(root, "timings.cache_n")
		d.Usage = &Usage{
			PromptTokens:     prompt,
			CompletionTokens: l.predicted,
			CachedTokens:     cached,
			CachedReported:   reported,
		}
		if prompt > 0 && l.predicted > 0 {
			d.Usage.TotalTokens = addCounts(prompt, l.predicted)
		}
		d.UsageCumulative = true
	}
	if t := root.Get("timings"); t.IsObject() {
		d.ServerTimings = llamaCppTimings(t)
	}
	if root.Get("stop").Bool() {
		if reason := str(root, "stop_type"); reason != "" {
			setFinish(d, reason)
		} else {
			endUnnamed(d)
		}
	}
	return nil
}

// llamaCppTimings maps llama-server's timings (ms) to the phase names used
// downstream: prompt processing is prefill, prediction is decode.
func llamaCppTimings(t gjson.Result) map[string]float64 {
	out := map[string]float64{}
	if v := t.Get("prompt_ms"); v.Type == gjson.Number {
		out["prefill"] = v.Float()
	}
	if v := t.Get("predicted_ms"); v.Type == gjson.Number {
		out["decode"] = v.Float()
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
