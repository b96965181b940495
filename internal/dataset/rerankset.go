package dataset

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// RerankOptions configure NewRerankSet: queries, each with a list of
// documents to score, of exact token lengths. The opt tags are the names
// scripts write (Dataset.rerank options).
type RerankOptions struct {
	Seed    uint64 `opt:"seed"`
	Queries int    `opt:"queries,positive" want:"a whole number of queries above 0 (leave it out for 64)"` // distinct queries; absent: 64
	// Documents is how many documents go with each query, drawn per query;
	// 0 = 16.
	Documents      Range  `opt:"documents"`
	QueryTokens    Range  `opt:"queryTokens"`                                                                // 0 = 16
	DocumentTokens Range  `opt:"documentTokens"`                                                             // 0 = 128
	TopN           int    `opt:"topN,positive" want:"a whole number above 0 (leave it out for every score)"` // asked of every call; absent: every score
	Tokenizer      string `opt:"tokenizer"`
}

// RerankQuery is one draw: a query and its documents.
type RerankQuery struct {
	ID             string
	Query          string
	QueryTokens    int
	Documents      []string
	DocumentTokens []int
	TopN           int
	Category       string // "docs_<count>", the call's category tag
}

// RerankSet is an immutable set of queries and the draw counter every VU of
// the process shares.
type RerankSet struct {
	tokenizer string
	queries   []RerankQuery
	draws     atomic.Uint64
}

// maxDocumentPool bounds the distinct documents generated: queries share
// them, as queries of one corpus share its documents.
const maxDocumentPool = 4096

// NewRerankSet builds the queries. The same options give the same queries.
func NewRerankSet(o RerankOptions) (*RerankSet, error) {
	defaults := []struct {
		r   *Range
		def int
		n   string
	}{{&o.Documents, 16, "documents"}, {&o.QueryTokens, 16, "queryTokens"}, {&o.DocumentTokens, 128, "documentTokens"}}
	for _, d := range defaults {
		if *d.r == (Range{}) {
			*d.r = Range{d.def, d.def}
		}
		if d.r.Min < 1 || d.r.Max < d.r.Min {
			return nil, fmt.Errorf("%s: need 1 <= min <= max, got [%d, %d]", d.n, d.r.Min, d.r.Max)
		}
	}
	if o.Documents.Max > maxBatch {
		return nil, fmt.Errorf("documents: at most %d per query, got %d", maxBatch, o.Documents.Max)
	}
	if o.Queries == 0 {
		o.Queries = 64
	}
	if o.Queries < 1 || o.TopN < 0 {
		return nil, fmt.Errorf("queries must be at least 1 and topN not negative, got %d and %d", o.Queries, o.TopN)
	}
	tk, err := tokenizer.Get(o.Tokenizer)
	if err != nil {
		return nil, err
	}
	cnt := newCounter(tk)
	pool, err := NewChunks(ChunkOptions{Seed: o.Seed, Tokens: o.DocumentTokens, Count: min(o.Queries*o.Documents.Max, maxDocumentPool), Tokenizer: o.Tokenizer})
	if err != nil {
		return nil, fmt.Errorf("documents: %w", err)
	}
	s := &RerankSet{tokenizer: tk.Name()}
	for i := range o.Queries {
		r := streamFor(o.Seed, "rerank-query", i)
		g := grammar{r}
		target := draw(r, o.QueryTokens)
		text, err := cnt.fit(layout{head: g.question(), body: func() []string { return words(" " + g.sentence()) }},
			target, func() string { return fillers[r.IntN(len(fillers))] })
		if err != nil {
			return nil, fmt.Errorf("query %d: %w", i, err)
		}
		n := draw(r, o.Documents)
		q := RerankQuery{ID: "q" + strconv.Itoa(i), Query: text, QueryTokens: target, TopN: o.TopN, Category: "docs_" + strconv.Itoa(n)}
		start := r.IntN(pool.Size())
		for j := range n {
			k := (start + j) % pool.Size()
			q.Documents = append(q.Documents, pool.texts[k])
			q.DocumentTokens = append(q.DocumentTokens, pool.tokens[k])
		}
		s.queries = append(s.queries, q)
	}
	return s, nil
}

// Size is the number of distinct queries.
func (s *RerankSet) Size() int { return len(s.queries) }

// Tokenizer names the tokenizer the texts were counted with.
func (s *RerankSet) Tokenizer() string { return s.tokenizer }

// Next returns the next query of the process-wide sequence.
func (s *RerankSet) Next() RerankQuery { return s.Draw(s.draws.Add(1) - 1) }

// Draw returns query n (modulo Size) without advancing Next. The query is
// shared: never modify its slices.
func (s *RerankSet) Draw(n uint64) RerankQuery { return s.queries[n%uint64(len(s.queries))] }

// Draws is how many queries Next has handed out.
func (s *RerankSet) Draws() uint64 { return s.draws.Load() }
