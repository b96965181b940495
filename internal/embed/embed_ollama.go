package embed

import (
	"errors"

	"github.com/tidwall/gjson"
)

// Ollama's native POST /api/embed: {model, input: str|[str], dimensions,
// truncate} → {model, embeddings: [[…]], total_duration, load_duration,
// prompt_eval_count} (durations in nanoseconds). It has no base64 encoding.
func init() {
	register(&API{
		Name:    "ollama",
		Path:    func(*Request) string { return "/api/embed" },
		Headers: bearer,
		Body: func(r *Request) ([]byte, error) {
			if r.Encoding == EncodingBase64 {
				return nil, errors.New("encodingFormat base64: Ollama's /api/embed answers floats only " +
					"(its OpenAI route, embedApi 'openai' with a base URL ending in /v1, takes base64)")
			}
			own := map[string]any{"input": inputValue(r)}
			if r.Model != "" {
				own["model"] = r.Model
			}
			if r.Dimensions > 0 {
				own["dimensions"] = r.Dimensions
			}
			return marshal(own, r.Extra)
		},
		Parse: parseOllama,
	})
}

func parseOllama(body []byte, keep bool) (*Answer, error) {
	root, err := parseRoot(body, false)
	if err != nil {
		return nil, err
	}
	embs := root.Get("embeddings")
	if !embs.IsArray() {
		return nil, errors.New("the answer has no embeddings array")
	}
	a, err := listOfVectors(embs, keep)
	if err != nil {
		return nil, err
	}
	a.Model = str(root, "model")
	a.InputTokens = nonNeg(root, "prompt_eval_count")
	a.ServerTimings = ollamaTimings(root)
	return a, nil
}

// ollamaTimings converts the nanosecond durations to milliseconds under the
// phase names chat calls use; load (a cold model) is apart from the rest.
func ollamaTimings(root gjson.Result) map[string]float64 {
	var out map[string]float64
	for field, phase := range map[string]string{"load_duration": "load", "prompt_eval_duration": "prefill", "total_duration": "total"} {
		if v := root.Get(field); v.Type == gjson.Number && v.Num >= 0 {
			if out == nil {
				out = map[string]float64{}
			}
			out[phase] = v.Num / 1e6
		}
	}
	return out
}
