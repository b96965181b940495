package protocol

import (
	"encoding/json"
	"math"
	"strings"
)

// How an answer's end is read: a decoder marks the terminal event and the
// finish reason the server named, and never guesses one it did not name;
// what an answer that reached the request's output limit is called the Spec
// says (MaxTokens, LengthFinish). The judgement itself, with all a stream's
// evidence, is stream.Call's.

// setFinish records a finish reason; any finish reason is the server saying the
// answer is complete.
func setFinish(d *Delta, reason string) {
	if reason != "" {
		d.FinishReason = reason
		d.Terminal = true
	}
}

// endUnnamed marks a terminal event that names no finish (servers that
// predate the field, a finish the caller did not ask for): the answer is
// complete and its finish unknown. Calling it "stop" would be a guess: an
// older server also stopped at the output limit.
func endUnnamed(d *Delta) { d.Terminal = true }

// firstCount is the first of the dotted paths (e.g. "options.num_predict")
// whose value in body is a positive whole number; 0 when none is. A limit
// given as text, a fraction or a negative number is not one a server
// enforces as a token count, so it is not taken as one.
func firstCount(body map[string]any, paths ...string) int64 {
	for _, p := range paths {
		if n := count(lookup(body, p)); n > 0 {
			return n
		}
	}
	return 0
}

func lookup(body map[string]any, path string) any {
	var v any = body
	for _, key := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[key]
	}
	return v
}

// count reads a JSON-ish number: the JS runtime hands integers over as
// int64, parsed JSON as float64 or json.Number.
func count(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case int64:
		return n
	case float64:
		if n >= 1 && n <= math.MaxInt64/2 && n == math.Trunc(n) {
			return int64(n)
		}
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	return 0
}
