package protocol

import "github.com/tidwall/gjson"

// A single-pass reading of the ordinary chat.completion.chunk, the event a
// streamed answer is made of (one per token). The general decoder
// (decodeOpenAIChunk) trims the payload, checks its nesting, validates it
// with gjson, then walks the object, its choices and each delta, each walk
// re-scanning the values it skips: five passes over every token's bytes.
// scanChatChunk validates and reads the chunk in one pass, and hands
// anything outside the shape it knows (an error, tool calls, a choices that
// is not an array, a key with escapes, deep nesting) back to the general
// decoder, which stays the reference: the fuzz target
// FuzzChatChunkScanAgreesWithDecoder holds the two to the same Delta and the
// same error on any input.

// scanMaxDepth bounds the nesting the scan follows; a deeper payload is
// the general decoder's (which checks the nesting first).
const scanMaxDepth = 32

// chatChunk is what the scan found in a chunk, applied to the Delta only
// once the whole payload proved valid.
type chatChunk struct {
	model          string
	hasModel       bool
	choices        string // the last "choices" value, raw ("" when absent)
	usage, timings string // the last "usage" and "timings" values, raw
}

// scanChatChunk decodes data into d as decodeOpenAIChunk with
// decodeChatChoice would; false, with d untouched, when the chunk is not
// one it reads (the caller then decodes it the general way).
func scanChatChunk(data string, d *Delta) bool {
	var c chatChunk
	if !c.scan(data) {
		return false
	}
	// The choices are read apart from the Delta first: a choice the scan
	// does not read (tool calls) sends the whole chunk back.
	var ch choicesRead
	if c.choices != "" && !ch.read(c.choices) {
		return false
	}
	if c.hasModel {
		d.Model = c.model
	}
	ch.apply(d)
	if len(c.usage) > 0 && c.usage[0] == '{' {
		d.Usage = openAIUsage(gjson.Parse(c.usage))
		d.UsageCumulative = ch.n > 0
	}
	if len(c.timings) > 0 && c.timings[0] == '{' {
		d.ServerTimings = llamaCppTimings(gjson.Parse(c.timings))
	}
	return true
}

// scan reads the chunk's top level: one object and nothing after it.
func (c *chatChunk) scan(s string) bool {
	i := skipWS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return skipWS(s, i+1) == len(s)
	}
	for {
		key, j, ok := scanKey(s, i)
		if !ok {
			return false
		}
		start := j
		switch key {
		case "error": // an error chunk is the general decoder's
			if !hasLiteral(s, j, "null") {
				return false
			}
			j += len("null")
		case "object", "model":
			var v string
			var isStr bool
			if j, v, isStr, ok = scanValueStr(s, j); !ok {
				return false
			}
			if key == "object" && isStr && v == "error" {
				return false
			}
			if key == "model" && isStr {
				c.model, c.hasModel = v, true
			}
		default:
			if j, ok = skipValue(s, j, 1); !ok {
				return false
			}
		}
		switch key {
		case "choices":
			c.choices = s[start:j]
		case "usage":
			c.usage = s[start:j]
		case "timings":
			c.timings = s[start:j]
		}
		i = skipWS(s, j)
		if i >= len(s) {
			return false
		}
		if s[i] == '}' {
			return skipWS(s, i+1) == len(s)
		}
		if s[i] != ',' {
			return false
		}
		i = skipWS(s, i+1)
	}
}

// choicesRead is what a chunk's choices say, in the order the general
// decoder applies it.
type choicesRead struct {
	n       int    // how many choices
	ops     [4]op  // the first pieces, without allocating
	more    []op   // the rest
	nops    int    // len(ops) used
	index   int    // the last choice index read
	indexed bool   // an index was read
	finish  string // the last finish reason read ("" : none)
}

// op is one piece of a choice, applied in order: text (content, refusal)
// or a delta's reasoning.
type op struct {
	reasoning bool
	s         string
}

func (r *choicesRead) add(o op) {
	if o.s == "" {
		return
	}
	if r.nops < len(r.ops) {
		r.ops[r.nops] = o
		r.nops++
		return
	}
	r.more = append(r.more, o)
}

// apply writes the choices into d as decodeChatChoice does, choice after
// choice: text and reasoning appended, the last index and finish kept.
func (r *choicesRead) apply(d *Delta) {
	for _, o := range r.ops[:r.nops] {
		o.applyTo(d)
	}
	for _, o := range r.more {
		o.applyTo(d)
	}
	if r.indexed {
		d.Choice = r.index
	}
	setFinish(d, r.finish)
}

func (o op) applyTo(d *Delta) {
	if o.reasoning {
		d.Reasoning += o.s
	} else {
		d.Text += o.s
	}
}

// read reads a choices value already validated by the top-level scan:
// an array of objects; false for anything else.
func (r *choicesRead) read(s string) bool {
	if s[0] != '[' {
		return false // null or another type: the general decoder's quirks
	}
	i := skipWS(s, 1)
	if s[i] == ']' {
		return true
	}
	for {
		if s[i] != '{' {
			return false
		}
		r.n++
		var ok bool
		if i, ok = r.readChoice(s, i); !ok {
			return false
		}
		i = skipWS(s, i)
		if s[i] == ']' {
			return true
		}
		i = skipWS(s, i+1) // ','
	}
}

// readChoice reads one choice object at s[i] and returns the index after it.
func (r *choicesRead) readChoice(s string, i int) (int, bool) {
	i = skipWS(s, i+1)
	if s[i] == '}' {
		return i + 1, true
	}
	for {
		key, j, ok := scanKey(s, i)
		if !ok {
			return 0, false
		}
		switch key {
		case "index":
			var n int
			if j, n, ok = scanSmallInt(s, j); !ok {
				return 0, false
			}
			r.index, r.indexed = n, true
		case "finish_reason":
			var v string
			var isStr bool
			if j, v, isStr, ok = scanValueStr(s, j); !ok {
				return 0, false
			}
			if isStr && v != "" {
				r.finish = v
			}
		case "delta":
			if j, ok = r.readDelta(s, j); !ok {
				return 0, false
			}
		default:
			if j, ok = skipValue(s, j, 3); !ok {
				return 0, false
			}
		}
		i = skipWS(s, j)
		if s[i] == '}' {
			return i + 1, true
		}
		i = skipWS(s, i+1) // ','
	}
}

// readDelta reads a choice's delta at s[i]: its text and reasoning, in
// order; null is no delta. Tool calls (an array), or a delta of another
// type, are the general decoder's.
func (r *choicesRead) readDelta(s string, i int) (int, bool) {
	if hasLiteral(s, i, "null") {
		return i + len("null"), true
	}
	if s[i] != '{' {
		return 0, false
	}
	var reasoningContent, reasoning string
	i = skipWS(s, i+1)
	if s[i] != '}' {
		for {
			key, j, ok := scanKey(s, i)
			if !ok {
				return 0, false
			}
			if key == "tool_calls" && s[j] == '[' { // tool calls are the general decoder's
				return 0, false
			}
			var v string
			var isStr bool
			if j, v, isStr, ok = scanValueStr(s, j); !ok {
				return 0, false
			}
			if isStr {
				switch key {
				case "content", "refusal":
					r.add(op{s: v})
				case "reasoning_content":
					reasoningContent = v
				case "reasoning":
					reasoning = v
				}
			}
			i = skipWS(s, j)
			if s[i] == '}' {
				break
			}
			i = skipWS(s, i+1) // ','
		}
	}
	if reasoningContent != "" { // a delta carrying both names is counted once
		r.add(op{reasoning: true, s: reasoningContent})
	} else {
		r.add(op{reasoning: true, s: reasoning})
	}
	return i + 1, true
}

// scanKey reads an object key at s[i] (after whitespace), and the colon
// after it; the index returned is the value's first byte. A key with an
// escape is not read (false): it would have to be unescaped to be matched.
func scanKey(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", 0, false
	}
	j := i + 1
	for j < len(s) && s[j] != '"' {
		if s[j] == '\\' || s[j] < ' ' {
			return "", 0, false
		}
		j++
	}
	if j >= len(s) {
		return "", 0, false
	}
	key := s[i+1 : j]
	j = skipWS(s, j+1)
	if j >= len(s) || s[j] != ':' {
		return "", 0, false
	}
	j = skipWS(s, j+1)
	if j >= len(s) {
		return "", 0, false
	}
	return key, j, true
}

// scanValueStr validates the value at s[i] and, when it is a string,
// returns it unescaped (isStr).
func scanValueStr(s string, i int) (end int, v string, isStr, ok bool) {
	if s[i] != '"' {
		end, ok = skipValue(s, i, 1)
		return end, "", false, ok
	}
	end, escaped, ok := skipString(s, i)
	if !ok {
		return 0, "", false, false
	}
	if escaped {
		return end, gjson.Parse(s[i:end]).Str, true, true
	}
	return end, s[i+1 : end-1], true, true
}

// scanSmallInt reads a choice index: a plain integer of up to nine digits
// (whatever else the general decoder reads its own way).
func scanSmallInt(s string, i int) (int, int, bool) {
	j, n := i, 0
	for j < len(s) && j-i < 10 && s[j] >= '0' && s[j] <= '9' {
		n = n*10 + int(s[j]-'0')
		j++
	}
	if j == i || j-i > 9 || (s[i] == '0' && j-i > 1) {
		return 0, 0, false
	}
	if j < len(s) && (s[j] == '.' || s[j] == 'e' || s[j] == 'E') {
		return 0, 0, false
	}
	return j, n, true
}

// skipValue validates the JSON value at s[i] and returns the index after
// it; false for invalid JSON or nesting beyond scanMaxDepth (depth is the
// value's own level).
func skipValue(s string, i, depth int) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	switch c := s[i]; {
	case c == '"':
		end, _, ok := skipString(s, i)
		return end, ok
	case c == '{' || c == '[':
		if depth > scanMaxDepth {
			return 0, false
		}
		return skipContainer(s, i, depth)
	case c == '-' || (c >= '0' && c <= '9'):
		return skipNumber(s, i)
	case c == 't':
		return i + 4, hasLiteral(s, i, "true")
	case c == 'f':
		return i + 5, hasLiteral(s, i, "false")
	case c == 'n':
		return i + 4, hasLiteral(s, i, "null")
	}
	return 0, false
}

// skipContainer validates the object or array at s[i].
func skipContainer(s string, i, depth int) (int, bool) {
	obj := s[i] == '{'
	closer := byte(']')
	if obj {
		closer = '}'
	}
	i = skipWS(s, i+1)
	if i < len(s) && s[i] == closer {
		return i + 1, true
	}
	for {
		if obj {
			var ok bool
			if i, ok = skipKey(s, i); !ok {
				return 0, false
			}
		}
		var ok bool
		if i, ok = skipValue(s, i, depth+1); !ok {
			return 0, false
		}
		i = skipWS(s, i)
		if i >= len(s) {
			return 0, false
		}
		if s[i] == closer {
			return i + 1, true
		}
		if s[i] != ',' {
			return 0, false
		}
		i = skipWS(s, i+1)
	}
}

// skipKey validates an object key (escapes allowed) and the colon after it.
func skipKey(s string, i int) (int, bool) {
	if i >= len(s) || s[i] != '"' {
		return 0, false
	}
	end, _, ok := skipString(s, i)
	if !ok {
		return 0, false
	}
	end = skipWS(s, end)
	if end >= len(s) || s[end] != ':' {
		return 0, false
	}
	end = skipWS(s, end+1)
	return end, end < len(s)
}

// skipString validates the string at s[i] (its opening quote) as JSON
// does: no control characters, only JSON's escapes.
func skipString(s string, i int) (end int, escaped, ok bool) {
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return j + 1, escaped, true
		case c < ' ':
			return 0, false, false
		case c == '\\':
			escaped = true
			j++
			if j >= len(s) {
				return 0, false, false
			}
			switch s[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(s) || !isHex(s[j+1]) || !isHex(s[j+2]) || !isHex(s[j+3]) || !isHex(s[j+4]) {
					return 0, false, false
				}
				j += 4
			default:
				return 0, false, false
			}
		}
	}
	return 0, false, false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// skipNumber validates a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(s string, i int) (int, bool) {
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = skipDigits(s, i)
	default:
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		j := skipDigits(s, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := skipDigits(s, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func skipDigits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func hasLiteral(s string, i int, lit string) bool {
	return len(s)-i >= len(lit) && s[i:i+len(lit)] == lit
}

// skipWS skips JSON's whitespace.
func skipWS(s string, i int) int {
	for i < len(s) {
		switch s[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
