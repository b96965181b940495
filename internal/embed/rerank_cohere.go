package embed

import (
	"errors"

	"github.com/tidwall/gjson"
)

// The rerank shape vLLM, Cohere and Jina share, POST /v1/rerank (vLLM also
// /rerank and /v2/rerank): {model, query, documents: [str], top_n,
// return_documents} → {id, model, usage: {total_tokens}, results: [{index,
// relevance_score, document?}]}.
func init() {
	registerRerank(&RerankAPI{
		Name:    "cohere",
		Path:    func(*RerankRequest) string { return "/rerank" },
		Headers: bearer,
		Body: func(r *RerankRequest) ([]byte, error) {
			own := map[string]any{"query": r.Query, "documents": r.Documents}
			if r.Model != "" {
				own["model"] = r.Model
			}
			if r.TopN > 0 {
				own["top_n"] = r.TopN
			}
			if r.ReturnDocuments {
				own["return_documents"] = true
			}
			return marshal(own, r.Extra)
		},
		Parse: func(body []byte, r *RerankRequest) (*RerankAnswer, error) {
			root, err := parseRoot(body, false)
			if err != nil {
				return nil, err
			}
			res := root.Get("results")
			if !res.IsArray() {
				return nil, errors.New("the answer has no results array")
			}
			a := &RerankAnswer{Model: str(root, "model"), InputTokens: nonNeg(root, "usage.total_tokens")}
			a.Results, err = ranked(res, "relevance_score")
			if err != nil {
				return nil, err
			}
			return settle(a, r, false)
		},
	})
}

// ranked reads [{index, <score>}].
func ranked(res gjson.Result, score string) ([]Ranked, error) {
	out := make([]Ranked, 0, len(res.Array()))
	var err error
	res.ForEach(func(_, x gjson.Result) bool {
		i, s := x.Get("index"), x.Get(score)
		if i.Type != gjson.Number || s.Type != gjson.Number {
			err = errors.New("a result lacks a numeric index or " + score)
			return false
		}
		out = append(out, Ranked{Index: int(i.Int()), Score: s.Num})
		return true
	})
	return out, err
}
