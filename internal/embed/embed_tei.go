package embed

import (
	"errors"
)

// Text Embeddings Inference's native POST /embed: {inputs: str|[str],
// normalize, truncate} → [[…], …]. The server serves one model, so the
// body names none; it has no base64 encoding and no dimensions field, and
// the answer no token count (the caller counts with its tokenizer).
func init() {
	register(&API{
		Name:    "tei",
		Path:    func(*Request) string { return "/embed" },
		Headers: bearer,
		Body: func(r *Request) ([]byte, error) {
			if r.Encoding == EncodingBase64 {
				return nil, errors.New("encodingFormat base64: TEI's /embed answers floats only " +
					"(its OpenAI route, embedApi 'openai' with a base URL ending in /v1, takes base64)")
			}
			if r.Dimensions > 0 {
				return nil, errors.New("dimensions: TEI's /embed has no such field (its OpenAI route has)")
			}
			own := map[string]any{"inputs": inputValue(r)}
			return marshal(own, r.Extra)
		},
		Parse: func(body []byte, keep bool) (*Answer, error) {
			root, err := parseRoot(body, true)
			if err != nil {
				return nil, err
			}
			return listOfVectors(root, keep)
		},
	})
}
