package embed

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRerankAnswersAreReadBestFirst(t *testing.T) {
	t.Parallel()
	three := &RerankRequest{Query: "capital of France?", Documents: []string{"a", "b", "c"}}
	cases := []struct {
		api, file string
		r         *RerankRequest
		want      []Ranked
		tokens    int64
		clientCut bool
	}{
		{"cohere", "cohere_rerank.json", &RerankRequest{Query: "q", Documents: []string{"a", "b"}},
			[]Ranked{{1, 0.99853515625}, {0, 0.0005860328674316406}}, 56, false},
		{"cohere", "jina_rerank.json", three, []Ranked{{2, 0.9}, {0, 0.4}}, 38, false},
		{"tei", "tei_rerank.json", three, []Ranked{{2, 0.998}, {0, 0.12}, {1, 0.0003}}, 0, false},
		{"tei", "tei_rerank.json", &RerankRequest{Query: "q", Documents: []string{"a", "b", "c"}, TopN: 2},
			[]Ranked{{2, 0.998}, {0, 0.12}}, 0, true},
	}
	for _, c := range cases {
		api, err := LookupRerank(c.api)
		require.NoError(t, err)
		a, err := api.Parse(fixture(t, c.file), c.r)
		require.NoError(t, err, c.file)
		assert.Equal(t, c.want, a.Results, c.file)
		assert.Equal(t, c.tokens, a.InputTokens, c.file)
		assert.Equal(t, c.clientCut, a.ClientTopN, c.file)
	}
}

func TestRerankAnswersThatDoNotFitTheRequestAreErrors(t *testing.T) {
	t.Parallel()
	r := &RerankRequest{Query: "q", Documents: []string{"a", "b"}}
	co, _ := LookupRerank("cohere")
	for body, want := range map[string]string{
		`{"results":[{"index":2,"relevance_score":0.1}]}`:                                   "outside the 2 documents",
		`{"results":[{"index":0,"relevance_score":0.1},{"index":0,"relevance_score":0.2}]}`: "ranked twice",
		`{"results":[{"index":0}]}`:                                                         "relevance_score",
		`{"data":[]}`:                                                                       "no results array",
		`{"results":[{"index":"0","relevance_score":0.1}]}`:                                 "numeric index",
	} {
		_, err := co.Parse([]byte(body), r)
		require.Error(t, err, body)
		assert.Contains(t, err.Error(), want, body)
	}
	tei, _ := LookupRerank("tei")
	_, err := tei.Parse([]byte(`{"results":[]}`), r)
	assert.ErrorContains(t, err, "not a JSON array")
}

func TestRerankBodies(t *testing.T) {
	t.Parallel()
	r := &RerankRequest{Model: "bge", Query: "q", Documents: []string{"a", "b"}, TopN: 1, ReturnDocuments: true}
	co, _ := LookupRerank("cohere")
	b, err := co.Body(r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"model":"bge","query":"q","documents":["a","b"],"top_n":1,"return_documents":true}`, string(b))
	tei, _ := LookupRerank("tei")
	b, err = tei.Body(r)
	require.NoError(t, err)
	assert.JSONEq(t, `{"query":"q","texts":["a","b"],"return_text":true}`, string(b))
	for _, bad := range []RerankRequest{{Documents: []string{"a"}}, {Query: "q"}, {Query: "q", Documents: []string{"a"}, TopN: -1}} {
		assert.Error(t, bad.Validate())
	}
	_, err = LookupRerank("x")
	assert.ErrorContains(t, err, "known: cohere, tei")
}
