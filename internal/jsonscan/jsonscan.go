// Package jsonscan validates JSON in place, a value at a time, for the
// single-pass readers of the client's hottest answers (a streamed chat
// chunk, an embeddings answer). A reader walks the shape it knows with Key
// and reads the values it wants itself, skipping the others with Value,
// which validates them as it goes: the document is read once, where
// validating it whole and then walking it (gjson.Valid, then ForEach and
// Get, each re-scanning the values it skips) read it several times.
//
// The functions are strict: what they accept is valid JSON. A reader that
// meets something they refuse, or a shape it does not know, hands the
// document to its general decoder, which stays the reference (each reader
// has a fuzz target holding it to that decoder). Nothing here allocates or
// recurses deeper than the caller's depth bound.
package jsonscan

// WS is the index of the first byte at or after i that is not JSON
// whitespace.
func WS(s string, i int) int {
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

// Key reads an object key at s[i] and the colon after it, and returns the
// key and the index of its value's first byte. A key with an escape is
// refused (false): a reader matching keys would have to unescape it.
func Key(s string, i int) (string, int, bool) {
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
	j = WS(s, j+1)
	if j >= len(s) || s[j] != ':' {
		return "", 0, false
	}
	j = WS(s, j+1)
	if j >= len(s) {
		return "", 0, false
	}
	return key, j, true
}

// Next reads what follows a member or element at s[i] (whitespace
// allowed): the closer, which ends the object or array (done), or a comma,
// and returns the index of the next member's or element's first byte.
func Next(s string, i int, closer byte) (next int, done, ok bool) {
	i = WS(s, i)
	if i >= len(s) {
		return 0, false, false
	}
	if s[i] == closer {
		return i + 1, true, true
	}
	if s[i] != ',' {
		return 0, false, false
	}
	i = WS(s, i+1)
	return i, false, i < len(s)
}

// Value validates the JSON value at s[i] and returns the index after it.
// depth is the value's nesting level (a member of the document's object is
// at 1); a container deeper than maxDepth is refused.
func Value(s string, i, depth, maxDepth int) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	switch c := s[i]; {
	case c == '"':
		end, _, ok := String(s, i)
		return end, ok
	case c == '{' || c == '[':
		if depth > maxDepth {
			return 0, false
		}
		return container(s, i, depth, maxDepth)
	case c == '-' || (c >= '0' && c <= '9'):
		return Number(s, i)
	case c == 't':
		return i + 4, Literal(s, i, "true")
	case c == 'f':
		return i + 5, Literal(s, i, "false")
	case c == 'n':
		return i + 4, Literal(s, i, "null")
	}
	return 0, false
}

// container validates the object or array at s[i].
func container(s string, i, depth, maxDepth int) (int, bool) {
	closer := byte(']')
	if s[i] == '{' {
		closer = '}'
	}
	i = WS(s, i+1)
	if i < len(s) && s[i] == closer {
		return i + 1, true
	}
	for {
		var ok bool
		if closer == '}' {
			if i, ok = anyKey(s, i); !ok {
				return 0, false
			}
		}
		if i, ok = Value(s, i, depth+1, maxDepth); !ok {
			return 0, false
		}
		var done bool
		if i, done, ok = Next(s, i, closer); !ok || done {
			return i, ok
		}
	}
}

// anyKey validates an object key (escapes allowed) and the colon after it.
func anyKey(s string, i int) (int, bool) {
	if i >= len(s) || s[i] != '"' {
		return 0, false
	}
	end, _, ok := String(s, i)
	if !ok {
		return 0, false
	}
	end = WS(s, end)
	if end >= len(s) || s[end] != ':' {
		return 0, false
	}
	end = WS(s, end+1)
	return end, end < len(s)
}

// String validates the string whose opening quote is s[i] as JSON does (no
// control characters, only JSON's escapes) and returns the index after its
// closing quote, and whether it holds an escape (then its text is not
// s[i+1:end-1] but that unescaped).
func String(s string, i int) (end int, escaped, ok bool) {
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

// Number validates the JSON number at s[i],
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, and returns the index
// after it.
func Number(s string, i int) (int, bool) {
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return 0, false
	}
	if i < len(s) && (s[i] == '.' || s[i] == 'e' || s[i] == 'E') {
		return fractionAndExponent(s, i)
	}
	return i, true
}

func digits(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// SmallInt reads a plain integer at s[i], -?[0-9]{1,9} with no fraction
// or exponent (what an index is); false for any other number, which a
// reader leaves to its general decoder's conversion.
func SmallInt(s string, i int) (int, int, bool) {
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
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
	if neg {
		n = -n
	}
	return j, n, true
}

// Literal says whether s holds lit at i.
func Literal(s string, i int, lit string) bool {
	return len(s)-i >= len(lit) && s[i:i+len(lit)] == lit
}

// Numbers validates the array of numbers whose '[' is s[i] and counts its
// elements, without converting one; false for anything else (an element
// that is not a number, invalid JSON). An embedding is a thousand or more
// of them, most of an embeddings answer: one loop over its bytes, where a
// call per element and per separator cost several times the bytes' own
// reading.
func Numbers(s string, i int) (end, n int, ok bool) {
	i = WS(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, 0, true
	}
	for {
		if i < len(s) && s[i] == '-' {
			i++
		}
		switch {
		case i >= len(s):
			return 0, 0, false
		case s[i] == '0':
			i++
		case s[i]-'1' < 9:
			i++
			for i < len(s) && s[i]-'0' < 10 {
				i++
			}
		default:
			return 0, 0, false
		}
		if i < len(s) && (s[i] == '.' || s[i] == 'e' || s[i] == 'E') {
			if i, ok = fractionAndExponent(s, i); !ok {
				return 0, 0, false
			}
		}
		n++
		if i < len(s) && s[i] == ',' { // the usual separator: no whitespace
			i = WS(s, i+1)
			continue
		}
		i = WS(s, i)
		switch {
		case i >= len(s):
			return 0, 0, false
		case s[i] == ']':
			return i + 1, n, true
		case s[i] != ',':
			return 0, 0, false
		}
		i = WS(s, i+1)
	}
}

// fractionAndExponent validates a number's tail at s[i] ('.', 'e' or 'E').
func fractionAndExponent(s string, i int) (int, bool) {
	if s[i] == '.' {
		j := digits(s, i+1)
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
		j := digits(s, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}
