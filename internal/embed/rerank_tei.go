package embed

import "fmt"

// Text Embeddings Inference's native POST /rerank: {query, texts,
// return_text} → [{index, score, text?}], every text scored, best first.
// It has no top-N field: TopN is applied by the client to the answer (the
// server's work is for every text, which the result says).
func init() {
	registerRerank(&RerankAPI{
		Name:    "tei",
		Path:    func(*RerankRequest) string { return "/rerank" },
		Headers: bearer,
		Body: func(r *RerankRequest) ([]byte, error) {
			own := map[string]any{"query": r.Query, "texts": r.Documents}
			if r.ReturnDocuments {
				own["return_text"] = true
			}
			return marshal(own, r.Extra)
		},
		Parse: func(body []byte, r *RerankRequest) (*RerankAnswer, error) {
			root, err := parseRoot(body, true)
			if err != nil {
				return nil, fmt.Errorf("TEI rerank: %w", err)
			}
			a := &RerankAnswer{}
			if a.Results, err = ranked(root, "score"); err != nil {
				return nil, err
			}
			return settle(a, r, true)
		},
	})
}
