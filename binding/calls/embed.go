package calls

// client.embed() and client.rerank(): the non-streamed calls of retrieval.
// Their bodies are read here, on the event loop; retrieval_plan.go makes
// their routes and runs them under the same retry, fallback and SLO policy
// as chat, and their one record (a call of record.RetrievalFigures) fans out
// to the JS result, k6's samples and the report like a chat call's.

import (
	"errors"
	"fmt"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/embed"
)

// embedBody is client.embed's first argument.
type embedBody struct {
	Input          any            `opt:"input" want:"a string or an array of strings"`
	Model          string         `opt:"model"`
	EncodingFormat string         `opt:"encodingFormat"`
	Dimensions     int            `opt:"dimensions,positive" want:"a whole number above 0 (leave it out for the model's)"`
	KeepVectors    bool           `opt:"keepVectors"`
	API            string         `opt:"api"`
	Extra          map[string]any `opt:"extra"`
}

// rerankBody is client.rerank's first argument.
type rerankBody struct {
	Query           string         `opt:"query"`
	Documents       []string       `opt:"documents"`
	TopN            int            `opt:"topN,positive" want:"a whole number above 0 (leave it out for every score)"`
	ReturnDocuments bool           `opt:"returnDocuments"`
	Model           string         `opt:"model"`
	API             string         `opt:"api"`
	Extra           map[string]any `opt:"extra"`
}

// Embed is client.embed(body, params): one embeddings call, a Promise of its
// result. Like chat(), it never rejects for a failed call unless k6's throw
// option is set.
func (c *Client) Embed(body, params sobek.Value) (*sobek.Promise, error) {
	if c.env.VU.State() == nil {
		return nil, errors.New("embed() can only be called in the VU context (default function, scenarios, setup), not in init")
	}
	if op, ok := c.lastEmbed.reuse(body); ok { // body_memo.go
		return c.startRetrieval(op, params)
	}
	var b embedBody
	if common.IsNullish(body) {
		return nil, errors.New("embed(body): body is required (e.g. {input: ['a chunk', 'another']})")
	}
	exported := body.Export()
	raw, plain := copyJSON(exported, 0) // before anything reads it
	if err := config.Decode("embed body", exported, &b); err != nil {
		return nil, err //nolint:wrapcheck // names the object itself
	}
	inputs, single, err := embedInputs(b.Input)
	if err != nil {
		return nil, err
	}
	op := &retrievalOp{op: embed.OpEmbed, apiName: b.API, keep: b.KeepVectors,
		embed: &embed.Request{Model: b.Model, Inputs: inputs, Single: single,
			Encoding: b.EncodingFormat, Dimensions: b.Dimensions, Extra: b.Extra}}
	if err := op.embed.Validate(); err != nil {
		return nil, fmt.Errorf("embed body: %w", err)
	}
	if plain {
		c.lastEmbed.keep(raw, op)
	}
	return c.startRetrieval(op, params)
}

// Rerank is client.rerank(body, params): one rerank call, a Promise of its
// result.
func (c *Client) Rerank(body, params sobek.Value) (*sobek.Promise, error) {
	if c.env.VU.State() == nil {
		return nil, errors.New("rerank() can only be called in the VU context (default function, scenarios, setup), not in init")
	}
	if op, ok := c.lastRerank.reuse(body); ok { // body_memo.go
		return c.startRetrieval(op, params)
	}
	if common.IsNullish(body) {
		return nil, errors.New("rerank(body): body is required (e.g. {query: 'q', documents: ['a', 'b']})")
	}
	var b rerankBody
	exported := body.Export()
	raw, plain := copyJSON(exported, 0) // before anything reads it
	if err := config.Decode("rerank body", exported, &b); err != nil {
		return nil, err //nolint:wrapcheck // names the object itself
	}
	op := &retrievalOp{op: embed.OpRerank, apiName: b.API,
		rerank: &embed.RerankRequest{Model: b.Model, Query: b.Query, Documents: b.Documents,
			TopN: b.TopN, ReturnDocuments: b.ReturnDocuments, Extra: b.Extra}}
	if err := op.rerank.Validate(); err != nil {
		return nil, fmt.Errorf("rerank body: %w", err)
	}
	if plain {
		c.lastRerank.keep(raw, op)
	}
	return c.startRetrieval(op, params)
}

// embedInputs reads body.input: one string (single) or a list of strings.
func embedInputs(v any) (inputs []string, single bool, err error) {
	switch x := v.(type) {
	case nil:
		return nil, false, errors.New("embed body: input is required (a string or an array of strings)")
	case string:
		return []string{x}, true, nil
	case []any:
		inputs = make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false, fmt.Errorf("embed body: input[%d] must be a string, got %T", i, e)
			}
			inputs[i] = s
		}
		return inputs, false, nil
	case []string:
		return x, false, nil
	default:
		return nil, false, fmt.Errorf("embed body: input must be a string or an array of strings, got %T", v)
	}
}
