package dataset

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

func TestChunksHaveExactTokenLengthsAndBatchesFollowTheMix(t *testing.T) {
	t.Parallel()
	c, err := NewChunks(ChunkOptions{Seed: 9, Tokens: Range{60, 140}, Count: 24, Batch: map[string]float64{"1": 3, "8": 1}})
	require.NoError(t, err)
	tk, _ := tokenizer.Get("")
	require.Equal(t, 24, c.Size())
	for i, text := range c.texts {
		assert.Equal(t, c.tokens[i], tk.Count(text), "chunk %d", i)
		assert.True(t, c.tokens[i] >= 60 && c.tokens[i] <= 140)
	}
	sizes := map[int]int{}
	for n := range uint64(400) {
		b := c.Draw(n)
		require.Len(t, b.Tokens, len(b.Inputs))
		sizes[len(b.Inputs)]++
		assert.Equal(t, "batch_"+map[int]string{1: "1", 8: "8"}[len(b.Inputs)], b.Category)
	}
	assert.Equal(t, map[int]int{1: 300, 8: 100}, sizes, "the schedule keeps the mix exact")
	assert.Equal(t, map[int]float64{1: 0.75, 8: 0.25}, c.BatchSizes())
	again, err := NewChunks(ChunkOptions{Seed: 9, Tokens: Range{60, 140}, Count: 24, Batch: map[string]float64{"1": 3, "8": 1}})
	require.NoError(t, err)
	assert.Equal(t, c.Draw(17), again.Draw(17), "the same options give the same batches")
	first := c.Next()
	assert.Equal(t, c.Draw(0), first)
	assert.Equal(t, uint64(1), c.Draws())
}

func TestChunksCutFromFilesAreExactToo(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("Embeddings turn text into vectors; naïve splitting cuts words – and UTF-8 like 東京 – apart. ", 40)
	c, err := NewChunks(ChunkOptions{Tokens: Range{32, 32}, Count: 1000, Files: []string{"a.txt"}, Texts: []SourceText{{"a.txt", text}}})
	require.NoError(t, err)
	tk, _ := tokenizer.Get("")
	assert.Equal(t, tk.Count(text)/32, c.Size(), "every whole chunk of the file, the short tail left out")
	for i, s := range c.texts {
		assert.Equal(t, 32, tk.Count(s), "chunk %d: %q", i, s)
		assert.Contains(t, text, strings.TrimRight(s, "\uFFFD"), "cut from the file")
	}
	_, err = NewChunks(ChunkOptions{Tokens: Range{500, 500}, Files: []string{"b.txt"}, Texts: []SourceText{{"b.txt", "short"}}})
	assert.ErrorContains(t, err, "too short for one chunk of 500 tokens")
}

func TestBadChunkOptionsAreErrorsNamingTheOption(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		o    ChunkOptions
		want string
	}{
		{ChunkOptions{Tokens: Range{0, 4}}, "tokens"},
		{ChunkOptions{Count: -1}, "count"},
		{ChunkOptions{Batch: map[string]float64{"x": 1}}, `size "x"`},
		{ChunkOptions{Batch: map[string]float64{"4096": 1}}, "from 1 to 2048"},
		{ChunkOptions{Batch: map[string]float64{"4": -1}}, "negative"},
		{ChunkOptions{Batch: map[string]float64{"8": 1, "08": 1}}, "given twice"},
		{ChunkOptions{Batch: map[string]float64{"8": 0}}, "batch: no category"},
		{ChunkOptions{Files: []string{"a.txt"}}, "no text read"},
		{ChunkOptions{Tokenizer: "nope"}, "nope"},
	} {
		_, err := NewChunks(c.o)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestRerankQueriesHaveTheirDocumentsAtExactLengths(t *testing.T) {
	t.Parallel()
	s, err := NewRerankSet(RerankOptions{Seed: 4, Queries: 6, Documents: Range{3, 5}, QueryTokens: Range{12, 12}, DocumentTokens: Range{40, 60}, TopN: 2})
	require.NoError(t, err)
	tk, _ := tokenizer.Get("")
	require.Equal(t, 6, s.Size())
	for n := range uint64(6) {
		q := s.Draw(n)
		assert.Equal(t, 12, tk.Count(q.Query))
		assert.Equal(t, 12, q.QueryTokens)
		assert.True(t, len(q.Documents) >= 3 && len(q.Documents) <= 5)
		assert.Equal(t, "docs_"+string(rune('0'+len(q.Documents))), q.Category)
		assert.Equal(t, 2, q.TopN)
		for j, d := range q.Documents {
			assert.Equal(t, q.DocumentTokens[j], tk.Count(d))
		}
	}
	assert.Equal(t, s.Draw(1), s.Draw(7), "draws wrap around the queries")
	for _, bad := range []RerankOptions{{Documents: Range{0, 2}}, {QueryTokens: Range{5, 2}}, {Queries: -1}, {TopN: -1}, {Documents: Range{1, 5000}}} {
		_, err := NewRerankSet(bad)
		assert.Error(t, err, "%+v", bad)
	}
}
