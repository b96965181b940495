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
	return AddServerTiming(nil, header)
}

// AddServerTiming is ParseServerTiming into m (made when nil and a metric
// is found): a response's headers, trailers and events fill one map. It
// walks the value in place, as a server sends one with every answer.
func AddServerTiming(m map[string]float64, header string) map[string]float64 {
	for rest, more := header, true; more; {
		var metric string
		metric, rest, more = cutOutsideQuotes(rest, ',')
		name, params, _ := cutOutsideQuotes(metric, ';')
		name = strings.TrimSpace(name)
		if name == "" || strings.ContainsAny(name, " \t\"=") {
			continue
		}
		dur, ok := durParam(params)
		if !ok {
			continue
		}
		if m == nil {
			m = map[string]float64{}
		}
		m[name] = dur
	}
	return m
}

// durParam finds the first dur parameter among params (the metric after its
// name, separated by ';') and reads its value (a token or a quoted string).
func durParam(params string) (float64, bool) {
	for more := params != ""; more; {
		var p string
		p, params, more = cutOutsideQuotes(params, ';')
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

// cutOutsideQuotes cuts s at the first sep outside a quoted string (where a
// backslash escapes the next character): desc="a, b" is one parameter.
// found is false, and before all of s, when there is none.
func cutOutsideQuotes(s string, sep byte) (before, after string, found bool) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
