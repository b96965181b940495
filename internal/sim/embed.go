package sim

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"strings"
	"unicode"
)

// Embeddings: OpenAI's /v1/embeddings (as vLLM, TEI and Ollama serve it
// too), Ollama's /api/embed, TEI's /embed and Gemini's embedContent and
// batchEmbedContents. Every input is a prefill-only sequence in the model's
// engine, so a batch's latency grows with its inputs and their tokens, and
// concurrent requests' inputs share engine steps (retrieval_serve.go).
//
// A vector is the input's words hashed into the dimensions (feature
// hashing), normalized: texts that share words point the same way, so a
// script's cosine search over llm-sim's vectors finds related chunks.

// defaultEmbedDim is the vectors' length unless the request asks for another.
const defaultEmbedDim = 1024

// maxEmbedDim bounds a requested dimension.
const maxEmbedDim = 8192

// retrievalRequest is an embeddings or rerank request in no wire format.
type retrievalRequest struct {
	Model      string
	Inputs     []string // embed
	Single     bool     // one input, answered as one (Gemini embedContent)
	Base64     bool     // OpenAI encoding_format: base64
	Dimensions int
	// rerank
	Query           string
	Documents       []string
	TopN            int
	ReturnDocuments bool
}

// stringOrList reads an input field: a string or an array of strings.
func stringOrList(raw json.RawMessage, param string) ([]string, bool, *apiError) {
	var one string
	if err := json.Unmarshal(raw, &one); err == nil {
		return []string{one}, true, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return nil, false, badRequest(param, "'"+param+"' must be a string or a non-empty array of strings")
	}
	return list, false, nil
}

func parseOpenAIEmbed(_ *http.Request, body []byte) (*retrievalRequest, *apiError) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		EncodingFormat string          `json:"encoding_format"`
		Dimensions     int             `json:"dimensions"`
	}
	if e := decodeBody(body, &req); e != nil {
		return nil, e
	}
	inputs, single, e := stringOrList(req.Input, "input")
	if e != nil {
		return nil, e
	}
	out := &retrievalRequest{Model: req.Model, Inputs: inputs, Single: single, Dimensions: req.Dimensions}
	switch req.EncodingFormat {
	case "", "float":
	case "base64":
		out.Base64 = true
	default:
		return nil, badRequest("encoding_format", "encoding_format must be 'float' or 'base64'")
	}
	return out, checkDimensions(out)
}

func parseOllamaEmbed(_ *http.Request, body []byte) (*retrievalRequest, *apiError) {
	var req struct {
		Model      string          `json:"model"`
		Input      json.RawMessage `json:"input"`
		Dimensions int             `json:"dimensions"`
	}
	if e := decodeBody(body, &req); e != nil {
		return nil, e
	}
	inputs, single, e := stringOrList(req.Input, "input")
	if e != nil {
		return nil, e
	}
	out := &retrievalRequest{Model: req.Model, Inputs: inputs, Single: single, Dimensions: req.Dimensions}
	return out, checkDimensions(out)
}

func parseTEIEmbed(_ *http.Request, body []byte) (*retrievalRequest, *apiError) {
	var req struct {
		Inputs json.RawMessage `json:"inputs"`
	}
	if e := decodeBody(body, &req); e != nil {
		return nil, e
	}
	inputs, single, e := stringOrList(req.Inputs, "inputs")
	if e != nil {
		return nil, e
	}
	return &retrievalRequest{Inputs: inputs, Single: single}, nil
}

// geminiContent is {content: {parts: [{text}]}, outputDimensionality}.
type geminiContent struct {
	Content *struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"content"`
	OutputDimensionality int `json:"outputDimensionality"`
}

func (c *geminiContent) text() (string, bool) {
	if c.Content == nil || len(c.Content.Parts) == 0 {
		return "", false
	}
	var sb strings.Builder
	for _, p := range c.Content.Parts {
		sb.WriteString(p.Text)
	}
	return sb.String(), true
}

// parseGeminiEmbed reads /v1beta/models/{m}:embedContent and :batchEmbedContents.
func parseGeminiEmbed(r *http.Request, body []byte) (*retrievalRequest, *apiError) {
	model, method, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, geminiPrefix), ":")
	out := &retrievalRequest{Model: model}
	if method == "embedContent" {
		var c geminiContent
		if e := decodeBody(body, &c); e != nil {
			return nil, e
		}
		text, ok := c.text()
		if !ok {
			return nil, badRequest("content", "* EmbedContentRequest.content: content is not specified")
		}
		out.Inputs, out.Single, out.Dimensions = []string{text}, true, c.OutputDimensionality
		return out, checkDimensions(out)
	}
	var req struct {
		Requests []geminiContent `json:"requests"`
	}
	if e := decodeBody(body, &req); e != nil {
		return nil, e
	}
	if len(req.Requests) == 0 {
		return nil, badRequest("requests", "* BatchEmbedContentsRequest.requests: requests is not specified")
	}
	for i := range req.Requests {
		text, ok := req.Requests[i].text()
		if !ok {
			return nil, badRequest("requests["+strconv.Itoa(i)+"].content", "content is not specified")
		}
		out.Inputs = append(out.Inputs, text)
		out.Dimensions = req.Requests[i].OutputDimensionality
	}
	return out, checkDimensions(out)
}

func checkDimensions(r *retrievalRequest) *apiError {
	if r.Dimensions < 0 || r.Dimensions > maxEmbedDim {
		return badRequest("dimensions", "dimensions must be between 1 and "+strconv.Itoa(maxEmbedDim))
	}
	return nil
}

// embedVector is text's vector: its words hashed into dim signed buckets,
// normalized to unit length (a text without words gets its own random one).
func embedVector(seed uint64, text string, dim int) []float32 {
	v := make([]float32, dim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		h := hashString(seed, w)
		sign := float32(1)
		if h&1 == 1 {
			sign = -1
		}
		v[(h>>1)%uint64(dim)] += sign // #nosec G115 -- dim > 0
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		h := hashString(seed, text)
		for i := range v {
			h = splitmix64(h)
			v[i] = float32(int64(h>>11)-1<<52) / float32(1<<52)
			norm += float64(v[i]) * float64(v[i])
		}
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// appendVector writes a vector as a JSON array of floats or a base64 string
// of little-endian float32s.
func appendVector(b []byte, v []float32, b64 bool) []byte {
	if b64 {
		raw := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, raw)
		return append(b, '"')
	}
	b = append(b, '[')
	for i, x := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendFloat(b, float64(x), 'g', 8, 32)
	}
	return append(b, ']')
}

// renderEmbeddings writes the answer of an embeddings route.
func renderEmbeddings(api string, req *retrievalRequest, vecs [][]float32, meta *retrievalMeta) []byte {
	b := make([]byte, 0, 64+len(vecs)*len(vecs[0])*12)
	switch api {
	case "openai":
		b = append(b, `{"object":"list","data":[`...)
		for i, v := range vecs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"object":"embedding","index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"embedding":`...)
			b = appendVector(b, v, req.Base64)
			b = append(b, '}')
		}
		b = append(b, `],"model":`...)
		b = appendJSONString(b, meta.model)
		b = append(b, `,"usage":{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(meta.tokens), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(meta.tokens), 10)
		return append(b, `}}`...)
	case "ollama":
		b = append(b, `{"model":`...)
		b = appendJSONString(b, meta.model)
		b = append(b, `,"embeddings":`...)
		b = appendVectorList(b, vecs, "", "")
		b = append(b, `,"total_duration":`...)
		b = strconv.AppendInt(b, meta.totalNS, 10)
		b = append(b, `,"load_duration":0,"prompt_eval_count":`...)
		b = strconv.AppendInt(b, int64(meta.tokens), 10)
		return append(b, '}')
	case "gemini":
		if req.Single {
			b = append(b, `{"embedding":{"values":`...)
			b = appendVector(b, vecs[0], false)
			return append(b, `}}`...)
		}
		b = append(b, `{"embeddings":`...)
		b = appendVectorList(b, vecs, `{"values":`, `}`)
		return append(b, '}')
	default: // tei
		return appendVectorList(b, vecs, "", "")
	}
}

func appendVectorList(b []byte, vecs [][]float32, open, closing string) []byte {
	b = append(b, '[')
	for i, v := range vecs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, open...)
		b = appendVector(b, v, false)
		b = append(b, closing...)
	}
	return append(b, ']')
}
