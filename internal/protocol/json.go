package protocol

import (
	"errors"
	"math"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/llmstream/xk6-llmstream/internal/jsondepth"
)

// errInvalidJSON is returned for an event whose payload is not one JSON object.
var errInvalidJSON = errors.New("event data is not a JSON object")

// parseObject parses an event payload that must be one JSON object. Every JSON
// protocol we speak sends objects only; a bare string or number is a broken
// stream, not an event to skip. Its nesting is checked first: gjson's
// validator recurses once per level, and an event is bounded only by
// maxEventSize (jsondepth says why that matters).
func parseObject(data string) (gjson.Result, error) {
	data = strings.TrimSpace(data)
	if err := jsondepth.Check(data, "event data"); err != nil {
		return gjson.Result{}, err
	}
	if !gjson.Valid(data) {
		return gjson.Result{}, errInvalidJSON
	}
	root := gjson.Parse(data)
	if !root.IsObject() {
		return gjson.Result{}, errInvalidJSON
	}
	return root, nil
}

// str returns the string value at path, or "" when it is absent or not a string
// (null, a number…): servers send null for "no content" as often as they omit it.
func str(r gjson.Result, path string) string {
	v := r.Get(path)
	if v.Type != gjson.String {
		return ""
	}
	return v.Str
}

// nonNegInt reads a token count; counts are never negative, and a malformed
// negative one must not make a running total go backwards.
func nonNegInt(r gjson.Result, path string) int64 {
	n := r.Get(path).Int()
	if n < 0 {
		return 0
	}
	return n
}

// rawArgs returns tool-call arguments as text: providers that send a call whole
// (Ollama, Gemini) give an object, the others a string fragment.
func rawArgs(v gjson.Result) string {
	switch {
	case !v.Exists() || v.Type == gjson.Null:
		return ""
	case v.Type == gjson.String:
		return v.Str
	default:
		return v.Raw
	}
}

// addCounts adds token counts without wrapping around: a hostile or corrupt
// count near the int64 limit must not turn a total negative.
func addCounts(counts ...int64) int64 {
	var sum int64
	for _, c := range counts {
		if c > math.MaxInt64-sum {
			return math.MaxInt64
		}
		sum += c
	}
	return sum
}

// namedEvent parses a named-event payload (Anthropic, OpenAI Responses) and
// returns its type: data.type, which equals the event: name and is what the
// SDKs key on; the event: name only when data.type is missing, which also
// serves compatible servers that leave the event: lines out.
func namedEvent(ev Event) (gjson.Result, string, error) {
	root, err := parseObject(ev.Data)
	if err != nil {
		return gjson.Result{}, "", err
	}
	typ := str(root, "type")
	if typ == "" {
		typ = ev.Type
	}
	return root, typ, nil
}
