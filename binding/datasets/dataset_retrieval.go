package datasets

import (
	"fmt"

	"github.com/grafana/sobek"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/internal/dataset"
)

// The JS faces of the retrieval datasets (document chunks for embed, query
// sets for rerank). Like the prompt sets, each is built once per process and
// shared by its VUs.

// chunks is Dataset.chunks(options).
func (ds DatasetFactory) Chunks(opts sobek.Value) (*jsChunks, error) {
	var o dataset.ChunkOptions
	if err := k6env.DecodeOptions(opts, "Dataset.chunks options", &o); err != nil {
		return nil, err
	}
	key := k6env.StoreKey("chunks", o)
	c, err := dataset.Shared(ds.Store, key, func() (*dataset.Chunks, error) {
		var digest string
		if len(o.Files) > 0 { // read once per process, not per VU
			texts, sum, err := readTexts(ds.VU, o.Files, "files")
			if err != nil {
				return nil, err
			}
			o.Texts, digest = texts, sum
		}
		c, err := dataset.NewChunks(o)
		if err == nil {
			ds.Info.RegisterDataset(key, "chunks", opts, c.Size(), digest)
		}
		return c, err
	})
	if err != nil {
		return nil, fmt.Errorf("Dataset.chunks: %w", err)
	}
	return &jsChunks{c: c}, nil
}

// rerank is Dataset.rerank(options).
func (ds DatasetFactory) Rerank(opts sobek.Value) (*jsRerankSet, error) {
	var o dataset.RerankOptions
	if err := k6env.DecodeOptions(opts, "Dataset.rerank options", &o); err != nil {
		return nil, err
	}
	key := k6env.StoreKey("rerank", o)
	s, err := dataset.Shared(ds.Store, key, func() (*dataset.RerankSet, error) {
		s, err := dataset.NewRerankSet(o)
		if err == nil {
			ds.Info.RegisterDataset(key, "rerank", opts, s.Size(), "")
		}
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("Dataset.rerank: %w", err)
	}
	return &jsRerankSet{s: s}, nil
}

// jsChunks is what scripts hold of Dataset.chunks: next(), draw(n), size(),
// info(). A batch is a fresh object: {inputs, tokens, totalTokens, category}.
type jsChunks struct{ c *dataset.Chunks }

// Next returns the process's next batch.
func (j *jsChunks) Next() map[string]any { return batchObject(j.c.Next()) }

// Draw returns batch n without advancing.
func (j *jsChunks) Draw(v sobek.Value) (map[string]any, error) {
	n, err := indexArg(v, "draw(n): n")
	if err != nil {
		return nil, err
	}
	return batchObject(j.c.Draw(uint64(n))), nil // #nosec G115 -- indexArg refuses negative numbers
}

// Size is the number of distinct chunks.
func (j *jsChunks) Size() int { return j.c.Size() }

// Info describes the chunks: how many, their tokenizer, the batch mix.
func (j *jsChunks) Info() map[string]any {
	mix := map[string]any{}
	for n, share := range j.c.BatchSizes() {
		mix[fmt.Sprint(n)] = share
	}
	return map[string]any{"chunks": j.c.Size(), "tokenizer": j.c.Tokenizer(), "batchShares": mix, "draws": j.c.Draws()}
}

func batchObject(b dataset.Batch) map[string]any {
	inputs := make([]any, len(b.Inputs))
	tokens := make([]any, len(b.Tokens))
	for i := range b.Inputs {
		inputs[i], tokens[i] = b.Inputs[i], int64(b.Tokens[i])
	}
	return map[string]any{"inputs": inputs, "tokens": tokens, "totalTokens": int64(b.TotalTokens()), "category": b.Category}
}

// jsRerankSet is what scripts hold of Dataset.rerank: next(), draw(n),
// size(). A query is a fresh object: {id, query, documents, topN, …}.
type jsRerankSet struct{ s *dataset.RerankSet }

// Next returns the process's next query.
func (j *jsRerankSet) Next() map[string]any { return queryObject(j.s.Next()) }

// Draw returns query n (modulo size) without advancing.
func (j *jsRerankSet) Draw(v sobek.Value) (map[string]any, error) {
	n, err := indexArg(v, "draw(n): n")
	if err != nil {
		return nil, err
	}
	return queryObject(j.s.Draw(uint64(n))), nil // #nosec G115 -- indexArg refuses negative numbers
}

// Size is the number of distinct queries.
func (j *jsRerankSet) Size() int { return j.s.Size() }

func queryObject(q dataset.RerankQuery) map[string]any {
	docs := make([]any, len(q.Documents))
	tokens := make([]any, len(q.Documents))
	for i := range q.Documents {
		docs[i], tokens[i] = q.Documents[i], int64(q.DocumentTokens[i])
	}
	return map[string]any{
		"id": q.ID, "query": q.Query, "queryTokens": int64(q.QueryTokens), "documents": docs,
		"documentTokens": tokens, "topN": int64(q.TopN), "category": q.Category,
	}
}
