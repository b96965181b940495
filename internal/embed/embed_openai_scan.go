package embed

import (
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/llmstream/xk6-llmstream/internal/jsonscan"
)

// A single-pass reading of the ordinary OpenAI embeddings answer whose
// vectors are not kept (what most embed() calls read): parseRoot's nesting
// check and gjson's validator each read the whole body, then the walk
// skipped over every vector once more, and the vectors are most of the
// answer. scanOpenAI validates and counts in one pass and hands anything it
// does not read (an error, a string with escapes where it reads one, an
// index that is not a plain integer, nesting past scanMaxDepth) back to
// parseOpenAIGeneral, the reference: FuzzOpenAIScanAgreesWithGeneral holds
// the two to the same answer.

// scanMaxDepth bounds the nesting the scan follows (an answer is four
// levels deep); a deeper body is the general parse's, which checks it first.
const scanMaxDepth = 32

// scanOpenAI reads an unkept answer as parseOpenAIGeneral(body, false)
// would; false when it leaves the body to it (which then answers or says
// what is wrong).
func scanOpenAI(body []byte) (*Answer, bool) {
	if len(body) == 0 {
		return nil, false
	}
	s := unsafe.String(&body[0], len(body)) // #nosec G103 -- a view of a body nobody changes (parseRoot)
	i := jsonscan.WS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return nil, false
	}
	var (
		vs                   vectorSet
		sawData, sawModel    bool
		model, usage         string
		modelIsStr, modelEsc bool
		ok, done             bool
	)
	i = jsonscan.WS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return nil, false // no data array: the general parse's error
	}
	for !done {
		var key string
		var j int
		if key, j, ok = jsonscan.Key(s, i); !ok {
			return nil, false
		}
		start := j
		// A repeated key keeps its first value, as the general parse reads it.
		switch {
		case key == "data" && !sawData:
			sawData = true
			if j, ok = scanVectors(s, j, &vs); !ok {
				return nil, false
			}
		case key == "model" && !sawModel:
			sawModel = true
			if s[j] == '"' {
				if j, modelEsc, ok = jsonscan.String(s, j); ok {
					model, modelIsStr = s[start:j], true
				}
			} else {
				j, ok = jsonscan.Value(s, j, 1, scanMaxDepth)
			}
		default:
			j, ok = jsonscan.Value(s, j, 1, scanMaxDepth)
			if ok && key == "usage" && usage == "" {
				usage = s[start:j]
			}
		}
		if !ok {
			return nil, false
		}
		if i, done, ok = jsonscan.Next(s, j, '}'); !ok {
			return nil, false
		}
	}
	if jsonscan.WS(s, i) != len(s) || !sawData {
		return nil, false
	}
	a := vs.answer()
	switch {
	case modelIsStr && modelEsc:
		a.Model = strings.Clone(gjson.Parse(model).Str)
	case modelIsStr:
		a.Model = strings.Clone(model[1 : len(model)-1])
	}
	u := gjson.Parse(usage) // small, once: the general parse's reading of it
	if a.InputTokens = nonNeg(u, "prompt_tokens"); a.InputTokens == 0 {
		a.InputTokens = nonNeg(u, "total_tokens")
	}
	return a, true
}

// scanVectors reads the data array at s[i] into vs (counted, not kept).
func scanVectors(s string, i int, vs *vectorSet) (int, bool) {
	if s[i] != '[' {
		return 0, false
	}
	i = jsonscan.WS(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, true
	}
	for {
		j, ok := scanVector(s, i, vs)
		if !ok {
			return 0, false
		}
		var done bool
		if i, done, ok = jsonscan.Next(s, j, ']'); !ok || done {
			return i, ok
		}
	}
}

// scanVector reads one element of data: an object whose first index, if
// a number, is a plain integer in range, and whose first embedding is an
// array of numbers or a base64 string without escapes.
func scanVector(s string, i int, vs *vectorSet) (int, bool) {
	if i >= len(s) || s[i] != '{' {
		return 0, false
	}
	var sawIndex, sawEmbedding bool
	dim := 0
	i = jsonscan.WS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return 0, false // no embedding: the general parse's error
	}
	for {
		key, j, ok := jsonscan.Key(s, i)
		if !ok {
			return 0, false
		}
		switch {
		case key == "index" && !sawIndex:
			sawIndex = true
			if s[j] == '-' || (s[j] >= '0' && s[j] <= '9') {
				var at int
				if j, at, ok = jsonscan.SmallInt(s, j); !ok || at < -1 || at > maxVectors {
					return 0, false
				}
			} else {
				j, ok = jsonscan.Value(s, j, 3, scanMaxDepth)
			}
		case key == "embedding" && !sawEmbedding:
			sawEmbedding = true
			j, dim, ok = scanEmbedding(s, j)
		default:
			j, ok = jsonscan.Value(s, j, 3, scanMaxDepth)
		}
		if !ok {
			return 0, false
		}
		var done bool
		if i, done, ok = jsonscan.Next(s, j, '}'); !ok {
			return 0, false
		}
		if done {
			break
		}
	}
	if !sawEmbedding || (vs.n > 0 && dim != vs.dim) {
		return 0, false
	}
	vs.dim = dim
	vs.n++
	return i, true
}

// scanEmbedding reads an embedding value at s[i] and returns its
// dimension: the numbers of an array (each validated, none converted), or
// what a base64 string's length says.
func scanEmbedding(s string, i int) (end, dim int, ok bool) {
	if s[i] == '"' {
		end, escaped, ok := jsonscan.String(s, i)
		if !ok || escaped {
			return 0, 0, false
		}
		dim, _, err := base64Vector(s[i+1:end-1], false)
		return end, dim, err == nil
	}
	if s[i] != '[' {
		return 0, 0, false
	}
	return jsonscan.Numbers(s, i)
}
