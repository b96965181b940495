package embed

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testdataFS(name string) ([]byte, error) { return os.ReadFile(filepath.Join("testdata", name)) }

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

func TestEveryAPIParsesItsDocumentedAnswer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		api, file    string
		count, dim   int
		tokens       int64
		model        string
		serverPhases int
	}{
		{"openai", "openai_float.json", 2, 6, 8, "text-embedding-3-small", 0},
		{"openai", "openai_base64.json", 2, 3, 11, "BAAI/bge-m3", 0}, // only total_tokens: it stands in
		{"openai", "vllm_float.json", 1, 6, 5, "intfloat/e5-mistral-7b-instruct", 0},
		{"ollama", "ollama_embed.json", 2, 6, 8, "all-minilm", 2},
		{"tei", "tei_embed.json", 3, 6, 0, "", 0},
		{"gemini", "gemini_embed.json", 1, 6, 0, "", 0},
		{"gemini", "gemini_batch.json", 2, 6, 0, "", 0},
	}
	for _, c := range cases {
		api, err := Lookup(c.api)
		require.NoError(t, err)
		for _, keep := range []bool{false, true} {
			a, err := api.Parse(fixture(t, c.file), keep)
			require.NoError(t, err, c.file)
			assert.Equal(t, c.count, a.Count, c.file)
			assert.Equal(t, c.dim, a.Dimension, c.file)
			assert.Equal(t, c.tokens, a.InputTokens, c.file)
			assert.Equal(t, c.model, a.Model, c.file)
			assert.Len(t, a.ServerTimings, c.serverPhases, c.file)
			if keep {
				require.Len(t, a.Vectors, c.count, c.file)
				assert.Len(t, a.Vectors[0], c.dim, c.file)
			} else {
				assert.Nil(t, a.Vectors, "vectors are counted, not kept: %s", c.file)
			}
		}
	}
}

func TestBase64VectorsAreDecodedInIndexOrder(t *testing.T) {
	t.Parallel()
	api, _ := Lookup("openai")
	a, err := api.Parse(fixture(t, "openai_base64.json"), true)
	require.NoError(t, err)
	// the answer lists index 1 first: values land by index, not by position
	assert.Equal(t, [][]float64{{0.5, 1, -1}, {1.5, -2, 0.25}}, a.Vectors)
}

func TestOllamaDurationsAreMilliseconds(t *testing.T) {
	t.Parallel()
	api, _ := Lookup("ollama")
	a, err := api.Parse(fixture(t, "ollama_embed.json"), false)
	require.NoError(t, err)
	assert.InDelta(t, 14.143917, a.ServerTimings["total"], 1e-9)
	assert.InDelta(t, 1.0195, a.ServerTimings["load"], 1e-9)
}

func TestMalformedAnswersAreErrorsNamingTheFault(t *testing.T) {
	t.Parallel()
	cases := []struct{ api, body, want string }{
		{"openai", `{"data":[{"embedding":[1,2]},{"embedding":[1,2,3]}]}`, "3 dimensions, the first had 2"},
		{"openai", `{"data":[{"embedding":[1,"x"]}]}`, "not a number"},
		{"openai", `{"data":[{"embedding":"AAAA="}]}`, "not padded"},
		{"openai", `{"data":[{"embedding":"AAA="}]}`, "whole number of float32s"},
		{"openai", `{"data":[{"embedding":{}}]}`, "neither an array"},
		{"openai", `{"object":"list"}`, "no data array"},
		{"openai", `{"data":[{"index":0,"embedding":[1]},{"index":0,"embedding":[2]}]}`, ""},
		{"openai", `{"data":[`, "not valid JSON"},
		{"openai", `[]`, "not a JSON object"},
		{"ollama", `{"embeddings":[[1],2]}`, "embedding 1 is not an array"},
		{"tei", `{"embeddings":[]}`, "not a JSON array"},
		{"gemini", `{"values":[1]}`, "neither embedding nor embeddings"},
	}
	for _, c := range cases {
		api, _ := Lookup(c.api)
		keep := c.want == "" // two vectors at one index shows only when they are kept
		_, err := api.Parse([]byte(c.body), keep)
		require.Error(t, err, c.body)
		assert.Contains(t, err.Error(), c.want, c.body)
	}
}

func TestRequestBodiesFollowEachAPI(t *testing.T) {
	t.Parallel()
	one := &Request{Model: "m", Inputs: []string{"hi"}, Single: true}
	batch := &Request{Model: "models/g", Inputs: []string{"a", "b"}, Encoding: EncodingBase64, Dimensions: 256,
		Extra: map[string]any{"user": "u1", "input": "an extra field cannot replace the inputs"}}
	cases := []struct {
		api  string
		r    *Request
		path string
		body string
	}{
		{"openai", one, "/embeddings", `{"input":"hi","model":"m"}`},
		{"openai", batch, "/embeddings", `{"dimensions":256,"encoding_format":"base64","input":["a","b"],"model":"models/g","user":"u1"}`},
		{"ollama", one, "/api/embed", `{"input":"hi","model":"m"}`},
		{"tei", &Request{Inputs: []string{"a", "b"}, Extra: map[string]any{"normalize": false}}, "/embed", `{"inputs":["a","b"],"normalize":false}`},
		{"gemini", one, "/models/m:embedContent", `{"content":{"parts":[{"text":"hi"}]}}`},
		{"gemini", &Request{Model: "g", Inputs: []string{"a", "b"}, Dimensions: 8}, "/models/g:batchEmbedContents",
			`{"requests":[{"content":{"parts":[{"text":"a"}]},"model":"models/g","outputDimensionality":8},{"content":{"parts":[{"text":"b"}]},"model":"models/g","outputDimensionality":8}]}`},
	}
	for _, c := range cases {
		api, _ := Lookup(c.api)
		require.NoError(t, c.r.Validate())
		b, err := api.Body(c.r)
		require.NoError(t, err, c.api)
		assert.JSONEq(t, c.body, string(b), c.api)
		assert.Equal(t, c.path, api.Path(c.r), c.api)
	}
}

func TestOptionsAnAPICannotCarryAreErrors(t *testing.T) {
	t.Parallel()
	b64 := &Request{Model: "m", Inputs: []string{"a"}, Encoding: EncodingBase64}
	for _, name := range []string{"ollama", "tei", "gemini"} {
		api, _ := Lookup(name)
		_, err := api.Body(b64)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), "encodingFormat base64", name)
	}
	tei, _ := Lookup("tei")
	_, err := tei.Body(&Request{Inputs: []string{"a"}, Dimensions: 3})
	assert.ErrorContains(t, err, "dimensions")
	gem, _ := Lookup("gemini")
	_, err = gem.Body(&Request{Inputs: []string{"a"}})
	assert.ErrorContains(t, err, "model")
	for _, r := range []Request{{}, {Inputs: []string{"a", "b"}, Single: true}, {Inputs: []string{"a"}, Encoding: "int8"}, {Inputs: []string{"a"}, Dimensions: -1}} {
		assert.Error(t, r.Validate(), "%+v", r)
	}
	_, err = Lookup("cohere-embed")
	assert.ErrorContains(t, err, "known: gemini, ollama, openai, tei")
}

func TestChatProtocolsPickTheirServersEmbeddingsAPI(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]string{"openai-chat": "openai", "llamacpp": "openai", "tgi": "openai", "ollama": "ollama", "gemini": "gemini"} {
		got, ok := ForProtocol(p)
		assert.True(t, ok, p)
		assert.Equal(t, want, got, p)
	}
	_, ok := ForProtocol("anthropic")
	assert.False(t, ok)
}

func TestErrorMessageReadsEveryServersShape(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"error":{"message":"bad input","type":"invalid_request_error"}}`:                     "bad input",
		`{"error":"Input validation error: inputs cannot be empty","error_type":"validation"}`: "Input validation error: inputs cannot be empty",
		`{"object":"error","message":"too long","code":400}`:                                   "too long",
		`{"detail":[{"msg":"field required"}]}`:                                                "",
		`<html>502</html>`:                                                                     "",
	} {
		assert.Equal(t, want, ErrorMessage([]byte(body)), body)
	}
	var v any
	require.NoError(t, json.Unmarshal(fixture(t, "tei_embed.json"), &v))
}
