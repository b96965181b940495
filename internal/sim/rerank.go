package sim

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// Rerank: the shape vLLM, Cohere and Jina share ({model, query, documents,
// top_n, return_documents} → {id, model, usage, results: [{index,
// relevance_score}]}) at /v1/rerank, /v2/rerank and /rerank, and TEI's
// ({query, texts} → [{index, score}]) at /rerank, told apart by the body:
// texts is TEI's. Every (query, document) pair is one prefill-only sequence,
// as a cross-encoder scores it.

func parseRerank(_ *http.Request, body []byte) (*retrievalRequest, *apiError) {
	var req struct {
		Model           string            `json:"model"`
		Query           *string           `json:"query"`
		Documents       []json.RawMessage `json:"documents"`
		Texts           []string          `json:"texts"`
		TopN            int               `json:"top_n"`
		ReturnDocuments bool              `json:"return_documents"`
		ReturnText      bool              `json:"return_text"`
	}
	if e := decodeBody(body, &req); e != nil {
		return nil, e
	}
	if req.Query == nil || *req.Query == "" {
		return nil, badRequest("query", "'query' is a required non-empty string")
	}
	out := &retrievalRequest{Model: req.Model, Query: *req.Query, TopN: req.TopN, ReturnDocuments: req.ReturnDocuments || req.ReturnText}
	if req.Texts != nil {
		out.Documents = req.Texts
	}
	for i, d := range req.Documents {
		// a document is a string or {text} (Cohere's and Jina's objects)
		var s string
		if err := json.Unmarshal(d, &s); err != nil {
			var obj struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(d, &obj); err != nil {
				return nil, badRequest("documents["+strconv.Itoa(i)+"]", "a document is a string or {text}")
			}
			s = obj.Text
		}
		out.Documents = append(out.Documents, s)
	}
	switch {
	case len(out.Documents) == 0:
		return nil, badRequest("documents", "'documents' must be a non-empty array")
	case out.TopN < 0:
		return nil, badRequest("top_n", "top_n must not be negative")
	}
	return out, nil
}

// isTEIRerank says the body used TEI's field names.
func isTEIRerank(body []byte) bool {
	var probe struct {
		Texts json.RawMessage `json:"texts"`
	}
	return json.Unmarshal(body, &probe) == nil && probe.Texts != nil
}

// relevance is the share of the document's distinct words that the query
// has too, so a script can check the ranking it got (and a RAG test ranks
// related chunks first); ties keep the documents' order.
func relevance(query, doc string) float64 {
	split := func(s string) map[string]bool {
		out := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			out[w] = true
		}
		return out
	}
	q, d := split(query), split(doc)
	if len(d) == 0 {
		return 0
	}
	shared := 0
	for w := range d {
		if q[w] {
			shared++
		}
	}
	return float64(shared) / float64(len(d))
}

type ranked struct {
	index int
	score float64
}

func rankDocuments(req *retrievalRequest) []ranked {
	out := make([]ranked, len(req.Documents))
	for i, d := range req.Documents {
		out[i] = ranked{i, relevance(req.Query, d)}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

// renderRerank writes the answer of a rerank route.
func renderRerank(tei bool, req *retrievalRequest, meta *retrievalMeta) []byte {
	res := rankDocuments(req)
	b := make([]byte, 0, 128+len(res)*48)
	if tei {
		b = append(b, '[')
		for i, r := range res {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"index":`...)
			b = strconv.AppendInt(b, int64(r.index), 10)
			b = append(b, `,"score":`...)
			b = strconv.AppendFloat(b, r.score, 'g', 8, 64)
			if req.ReturnDocuments {
				b = append(b, `,"text":`...)
				b = appendJSONString(b, req.Documents[r.index])
			}
			b = append(b, '}')
		}
		return append(b, ']')
	}
	if req.TopN > 0 && len(res) > req.TopN {
		res = res[:req.TopN]
	}
	b = append(b, `{"id":`...)
	b = appendJSONString(b, "rerank-"+meta.id)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, meta.model)
	b = append(b, `,"usage":{"total_tokens":`...)
	b = strconv.AppendInt(b, int64(meta.tokens), 10)
	b = append(b, `},"results":[`...)
	for i, r := range res {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendInt(b, int64(r.index), 10)
		if req.ReturnDocuments {
			b = append(b, `,"document":{"text":`...)
			b = appendJSONString(b, req.Documents[r.index])
			b = append(b, '}')
		}
		b = append(b, `,"relevance_score":`...)
		b = strconv.AppendFloat(b, r.score, 'g', 8, 64)
		b = append(b, '}')
	}
	return append(b, `]}`...)
}
