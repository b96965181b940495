package protocol

import (
	"math"
	"strconv"
	"strings"
)

// ParseServerTiming reads a Server-Timing header or trailer value
// (`queue;dur=1.2, prefill;dur=3.4;desc="x"`; several field lines joined with
// ", " are one list) into durations in milliseconds by metric name. A metric
// without a usable dur (absent, not a number, negative, NaN or infinite) is
// skipped; for a name given twice the last wins; within one metric the first
// dur wins (W3C Server Timing). Bad syntax never fails the call: the parts that
// parse are kept. Separators inside quoted strings (desc="a, b;c") do not split.
func ParseServerTiming(header string) map[string]float64 {
	var out map[string]float64
	for _, metric := range splitOutsideQuotes(header, ',') {
		params := splitOutsideQuotes(metric, ';')
		name := strings.TrimSpace(params[0])
		if name == "" || strings.ContainsAny(name, " \t\"=") {
			continue
		}
		dur, ok := durParam(params[1:])
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]float64{}
		}
		out[name] = dur
	}
	return out
}

// durParam finds the first dur parameter and reads its value (a token or a
// quoted string).
func durParam(params []string) (float64, bool) {
	for _, p := range params {
		k, v, found := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(k), "dur") {
			continue
		}
		if !found {
			return 0, false
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// splitOutsideQuotes splits s at sep, except inside a quoted string (where a
// backslash escapes the next character): desc="a, b" is one parameter.
func splitOutsideQuotes(s string, sep byte) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}
