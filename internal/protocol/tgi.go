package protocol

import (
	"net/http"

	"github.com/tidwall/gjson"
)

func init() {
	Register(&Spec{
		Name:    "tgi",
		Framing: FramingSSE,
		Path:    func(Request) string { return "/generate_stream" },
		Prepare: func(body map[string]any, _ Request) {
			// details:true makes the last event carry the finish reason and the
			// token counts; without it only generated_text marks the end.
			params, _ := body["parameters"].(map[string]any)
			if params == nil {
				if _, set := body["parameters"]; set {
					return // not an object: the caller's business
				}
				params = map[string]any{}
				body["parameters"] = params
			}
			setDefault(params, "details", true)
		},
		Headers: func(h http.Header, r Request) {
			bearer(h, r)
			streamHeaders(h, "text/event-stream")
		},
		NewDecoder:       func() Decoder { return &tgi{} },
		OutputLimitField: "parameters.max_new_tokens",
		LengthFinish:     "length",
	})
}

// tgi decodes Hugging Face TGI's native /generate_stream: one event per token
// ({"token": {"text", "special"}}), the last with generated_text and details;
// no [DONE]. axum writes "data:{…}" without a space, which SSE allows.
type tgi struct{}

func (*tgi) Decode(ev Event, d *Delta) error {
	root, err := parseObject(ev.Data)
	if err != nil {
		return err
	}
	if e := streamedOpenAIError(root); e != nil {
		d.Err = e
		return nil
	}
	// A special token (EOS) is generated and counted, but it is not text.
	if tok := root.Get("token"); !tok.Get("special").Bool() {
		d.Text = str(tok, "text")
	}
	details := root.Get("details")
	if details.IsObject() {
		gen, input := nonNegInt(details, "generated_tokens"), nonNegInt(details, "input_length")
		if gen > 0 || input > 0 {
			d.Usage = &Usage{PromptTokens: input, CompletionTokens: gen}
			if input > 0 && gen > 0 {
				d.Usage.TotalTokens = addCounts(input, gen)
			}
		}
	}
	if gt := root.Get("generated_text"); gt.Exists() && gt.Type != gjson.Null {
		if reason := str(details, "finish_reason"); reason != "" {
			setFinish(d, reason)
		} else {
			endUnnamed(d) // details not asked for: the end, but not its reason
		}
	}
	return nil
}
