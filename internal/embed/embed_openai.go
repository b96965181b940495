package embed

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// OpenAI's POST /v1/embeddings, which vLLM, SGLang, llama.cpp, TEI and
// Ollama also serve under /v1: {model, input: str|[str], encoding_format,
// dimensions} → {data: [{index, embedding}], model, usage: {prompt_tokens,
// total_tokens}}.
func init() {
	register(&API{
		Name:    "openai",
		Path:    func(*Request) string { return "/embeddings" },
		Headers: bearer,
		Body: func(r *Request) ([]byte, error) {
			own := map[string]any{"input": inputValue(r)}
			if r.Model != "" {
				own["model"] = r.Model
			}
			if r.Encoding != "" {
				own["encoding_format"] = r.Encoding
			}
			if r.Dimensions > 0 {
				own["dimensions"] = r.Dimensions
			}
			return marshal(own, r.Extra)
		},
		Parse: parseOpenAI,
	})
}

func parseOpenAI(body []byte, keep bool) (*Answer, error) {
	if !keep {
		if a, ok := scanOpenAI(body); ok { // the ordinary answer, in one pass (embed_openai_scan.go)
			return a, nil
		}
	}
	return parseOpenAIGeneral(body, keep)
}

// parseOpenAIGeneral reads any answer, its vectors kept or not: the
// reference the single-pass scan is held to.
func parseOpenAIGeneral(body []byte, keep bool) (*Answer, error) {
	root, err := parseRoot(body, false)
	if err != nil {
		return nil, err
	}
	// One pass over the top level: each root.Get would rescan the body,
	// skipping every vector's text again (the answer is mostly vectors). A
	// repeated key keeps its first value, as Get would.
	var data, model, usage gjson.Result
	root.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == "data" && !data.Exists():
			data = v
		case k.Str == "model" && !model.Exists():
			model = v
		case k.Str == "usage" && !usage.Exists():
			usage = v
		}
		return true
	})
	if !data.IsArray() {
		return nil, fmt.Errorf("the answer has no data array")
	}
	vs := vectorSet{keep: keep}
	data.ForEach(func(_, d gjson.Result) bool {
		at := -1
		if i := d.Get("index"); i.Type == gjson.Number {
			at = int(i.Int())
		}
		if at < -1 || at > maxVectors {
			err = fmt.Errorf("embedding index %d is out of range", at)
			return false
		}
		err = vs.add(d.Get("embedding"), at)
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	a := vs.answer()
	if model.Type == gjson.String {
		a.Model = strings.Clone(model.Str) // not a view of the body (parseRoot)
	}
	// prompt_tokens is the inputs' count; total_tokens equals it for
	// embeddings, and is all some compatible servers send.
	if a.InputTokens = nonNeg(usage, "prompt_tokens"); a.InputTokens == 0 {
		a.InputTokens = nonNeg(usage, "total_tokens")
	}
	return a, nil
}

// maxVectors bounds the index an answer may place a vector at, so a corrupt
// index cannot make the client allocate without limit.
const maxVectors = 1 << 20

func str(r gjson.Result, path string) string {
	if v := r.Get(path); v.Type == gjson.String {
		return strings.Clone(v.Str) // not a view of the body (parseRoot)
	}
	return ""
}
