package embed

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
)

// Gemini: one text goes to POST /models/{m}:embedContent ({content: {parts:
// [{text}]}, outputDimensionality} → {embedding: {values}}), a list to
// :batchEmbedContents ({requests: [{model, content, …}]} → {embeddings:
// [{values}]}), even a list of one, as the caller asked. No base64 encoding.
func init() {
	register(&API{
		Name: "gemini",
		Path: func(r *Request) string {
			m := url.PathEscape(strings.TrimPrefix(r.Model, "models/"))
			if r.Single {
				return "/models/" + m + ":embedContent"
			}
			return "/models/" + m + ":batchEmbedContents"
		},
		Headers: func(h http.Header, key string) {
			if key != "" {
				h.Set("x-goog-api-key", key)
			}
		},
		Body:  geminiBody,
		Parse: parseGemini,
	})
}

func geminiBody(r *Request) ([]byte, error) {
	if r.Encoding == EncodingBase64 {
		return nil, errors.New("encodingFormat base64: Gemini's embedContent answers floats only")
	}
	if r.Model == "" {
		return nil, errors.New("model: Gemini names the model in the path; set the client's model or the call's")
	}
	content := func(text string) map[string]any {
		c := map[string]any{"content": map[string]any{"parts": []any{map[string]any{"text": text}}}}
		if r.Dimensions > 0 {
			c["outputDimensionality"] = r.Dimensions
		}
		for k, v := range r.Extra { // taskType, title: per content in a batch
			if _, own := c[k]; !own {
				c[k] = v
			}
		}
		return c
	}
	if r.Single {
		return marshal(content(r.Inputs[0]), nil)
	}
	model := "models/" + strings.TrimPrefix(r.Model, "models/")
	reqs := make([]any, len(r.Inputs))
	for i, in := range r.Inputs {
		c := content(in)
		c["model"] = model
		reqs[i] = c
	}
	return marshal(map[string]any{"requests": reqs}, nil)
}

func parseGemini(body []byte, keep bool) (*Answer, error) {
	root, err := parseRoot(body, false)
	if err != nil {
		return nil, err
	}
	vs := vectorSet{keep: keep}
	switch one, many := root.Get("embedding"), root.Get("embeddings"); {
	case one.IsObject():
		err = vs.add(one.Get("values"), -1)
	case many.IsArray():
		many.ForEach(func(_, e gjson.Result) bool {
			err = vs.add(e.Get("values"), -1)
			return err == nil
		})
	default:
		return nil, errors.New("the answer has neither embedding nor embeddings")
	}
	if err != nil {
		return nil, err
	}
	a := vs.answer()
	// Read when the server reports it (Vertex and newer releases do).
	a.InputTokens = nonNeg(root, "usageMetadata.promptTokenCount")
	return a, nil
}
