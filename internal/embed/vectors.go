package embed

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"

	"github.com/llmstream/xk6-llmstream/internal/jsondepth"
)

// vectorSet gathers an answer's vectors: it counts them and checks they all
// have one dimension, and keeps their values only when asked. The values
// are parsed number by number only then; counting walks the JSON without
// converting a single number.
type vectorSet struct {
	keep bool
	n    int
	dim  int
	vals [][]float64
}

// add reads one vector: a JSON array of numbers, or a base64 string of
// little-endian float32s. at places it (the answer's index field); -1
// appends.
func (s *vectorSet) add(v gjson.Result, at int) error {
	var (
		dim  int
		vals []float64
		err  error
	)
	switch {
	case v.IsArray():
		dim, vals, err = floatVector(v, s.keep)
	case v.Type == gjson.String:
		dim, vals, err = base64Vector(v.Str, s.keep)
	default:
		err = fmt.Errorf("embedding %d is neither an array of numbers nor a base64 string", s.n)
	}
	if err != nil {
		return err
	}
	if s.n > 0 && dim != s.dim {
		return fmt.Errorf("embedding %d has %d dimensions, the first had %d", s.n, dim, s.dim)
	}
	s.dim = dim
	s.n++
	if s.keep {
		if at < 0 {
			at = len(s.vals)
		}
		for len(s.vals) <= at {
			s.vals = append(s.vals, nil)
		}
		if s.vals[at] != nil {
			return fmt.Errorf("two embeddings for index %d", at)
		}
		s.vals[at] = vals
	}
	return nil
}

func (s *vectorSet) answer() *Answer {
	a := &Answer{Count: s.n, Dimension: s.dim}
	if s.keep {
		a.Vectors = s.vals
		if a.Vectors == nil {
			a.Vectors = [][]float64{}
		}
		for i, v := range a.Vectors {
			if v == nil {
				a.Vectors[i] = []float64{} // an index the server skipped
			}
		}
	}
	return a
}

// listOfVectors reads a JSON array of float vectors (Ollama's embeddings,
// TEI's whole answer).
func listOfVectors(list gjson.Result, keep bool) (*Answer, error) {
	vs := vectorSet{keep: keep}
	var err error
	list.ForEach(func(_, v gjson.Result) bool {
		if !v.IsArray() {
			err = fmt.Errorf("embedding %d is not an array of numbers", vs.n)
			return false
		}
		err = vs.add(v, -1)
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return vs.answer(), nil
}

var errNotNumber = errors.New("a vector holds something that is not a number")

func floatVector(v gjson.Result, keep bool) (int, []float64, error) {
	if !keep {
		return countNumbers(v.Raw)
	}
	dim := 0
	var vals []float64
	var bad bool
	v.ForEach(func(_, x gjson.Result) bool {
		if x.Type != gjson.Number {
			bad = true
			return false
		}
		if keep {
			vals = append(vals, x.Num)
		}
		dim++
		return true
	})
	if bad {
		return 0, nil, errNotNumber
	}
	return dim, vals, nil
}

// countNumbers sizes a JSON array of numbers without parsing one. The
// answer was validated whole (parseRoot), so the array is well formed: it
// holds something other than numbers exactly when one of the bytes that
// start a string, array, object, true, false or null is in it (a number has
// none of them), and then its elements are its commas plus one. Each of
// those is a search for one byte, which the standard library does many
// bytes at a time, where a loop over the array's bytes did one; the vector
// is most of the answer, so this is most of what an unkept vector costs.
func countNumbers(raw string) (int, []float64, error) {
	raw = strings.TrimRight(raw, " \t\r\n") // a whole document's Raw keeps its trailing space
	if len(raw) < 2 {
		return 0, nil, errNotNumber
	}
	inner := raw[1 : len(raw)-1] // within '[' and ']'
	for i := range len(notInNumbers) {
		if strings.IndexByte(inner, notInNumbers[i]) >= 0 {
			return 0, nil, errNotNumber
		}
	}
	if skipSpace(inner, 0) == len(inner) {
		return 0, nil, nil
	}
	return strings.Count(inner, ",") + 1, nil, nil
}

// notInNumbers are the first bytes of every JSON value but a number.
const notInNumbers = `"[{tfn`

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// base64Vector sizes a base64 vector from its length alone unless its values
// are wanted: decoding is what the values cost, counting should not.
func base64Vector(s string, keep bool) (int, []float64, error) {
	if !keep {
		n := len(s)
		if n%4 != 0 {
			return 0, nil, fmt.Errorf("base64 vector of %d characters is not padded to a multiple of 4", n)
		}
		last := s[max(0, n-2):]
		bytes := n/4*3 - (len(last) - len(strings.TrimRight(last, "=")))
		if bytes%4 != 0 {
			return 0, nil, fmt.Errorf("base64 vector of %d bytes is not a whole number of float32s", bytes)
		}
		return bytes / 4, nil, nil
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return 0, nil, fmt.Errorf("base64 vector: %w", err)
	}
	if len(raw)%4 != 0 {
		return 0, nil, fmt.Errorf("base64 vector of %d bytes is not a whole number of float32s", len(raw))
	}
	vals := make([]float64, len(raw)/4)
	for i := range vals {
		vals[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	}
	return len(vals), vals, nil
}

// parseRoot checks body is one JSON document of the wanted kind. It reads
// body in place (gjson.ParseBytes would copy it, the answer's largest
// allocation after its read): an answer's body is never changed once read,
// and a string kept from it is cloned (str, the model) so that a result
// does not hold the whole body alive. Its nesting is checked before gjson's
// validator, which recurses once per level over a body bounded only by
// maxBodySize (jsondepth says why that matters).
func parseRoot(body []byte, array bool) (gjson.Result, error) {
	if len(body) == 0 {
		return gjson.Result{}, errors.New("the answer is not valid JSON")
	}
	view := unsafe.String(&body[0], len(body)) // #nosec G103 -- a zero-copy view of a body nobody changes (above)
	if err := jsondepth.Check(view, "the answer"); err != nil {
		return gjson.Result{}, err
	}
	if !gjson.Valid(view) {
		return gjson.Result{}, errors.New("the answer is not valid JSON")
	}
	root := gjson.Parse(view)
	switch {
	case array && !root.IsArray():
		return gjson.Result{}, errors.New("the answer is not a JSON array")
	case !array && !root.IsObject():
		return gjson.Result{}, errors.New("the answer is not a JSON object")
	}
	return root, nil
}

func nonNeg(r gjson.Result, path string) int64 {
	return max(r.Get(path).Int(), 0)
}

// marshal renders an API's own fields over the caller's extra ones: a field
// the API sets is the API's (the inputs, the model), so an extra field of
// the same name cannot change what was measured.
func marshal(own map[string]any, extra map[string]any) ([]byte, error) {
	if len(extra) > 0 {
		merged := make(map[string]any, len(own)+len(extra))
		for k, v := range extra {
			merged[k] = v
		}
		for k, v := range own {
			merged[k] = v
		}
		own = merged
	}
	return json.Marshal(own) //nolint:wrapcheck // the caller names the call
}

// inputValue is the input field: one string, or the list.
func inputValue(r *Request) any {
	if r.Single {
		return r.Inputs[0]
	}
	return r.Inputs
}

// ErrorMessage finds the message in an error answer of any of the servers
// we speak to ({"error":{"message"}}, {"error":"…"}, {"message"}, {"detail"});
// "" when there is none (an HTML page from a gateway).
func ErrorMessage(body []byte) string {
	if !jsondepth.Within(body, jsondepth.Limit) || !gjson.ValidBytes(body) {
		return ""
	}
	root := gjson.ParseBytes(body)
	for _, p := range []string{"error.message", "error", "message", "detail", "0.msg"} {
		if v := root.Get(p); v.Type == gjson.String && v.Str != "" {
			return v.Str
		}
	}
	return ""
}
