package servermetrics

import (
	"bytes"
	"strings"
)

// openMetricsToText rewrites an OpenMetrics body into the Prometheus text
// format that expfmt parses (expfmt has no OpenMetrics decoder). What differs
// and matters here:
//   - a counter's TYPE names the family without "_total" while its samples
//     carry it: the TYPE and HELP lines get the suffix, so the samples keep
//     their counter type;
//   - info, stateset, gaugehistogram and unknown types become untyped;
//   - samples may end with a timestamp in seconds (the text format wants
//     integer milliseconds) and an exemplar ("# {trace_id=...} 1"): both are
//     dropped, as nothing here reads them;
//   - "# UNIT" and "# EOF" lines are dropped.
func openMetricsToText(body []byte) []byte {
	out := make([]byte, 0, len(body))
	for len(body) > 0 {
		line := body
		if i := bytes.IndexByte(body, '\n'); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			body = nil
		}
		out = appendOpenMetricsLine(out, line)
	}
	return out
}

func appendOpenMetricsLine(out, line []byte) []byte {
	if len(line) == 0 {
		return out
	}
	if line[0] == '#' {
		f := bytes.Fields(line)
		if len(f) < 3 {
			return out // "# EOF", empty comments
		}
		switch string(f[1]) {
		case "UNIT":
			return out
		case "TYPE":
			name := string(f[2])
			typ := ""
			if len(f) > 3 {
				typ = string(f[3])
			}
			switch typ {
			case "counter":
				if strings.HasSuffix(name, "_total") {
					return append(append(out, line...), '\n')
				}
				return append(append(append(out, "# TYPE "...), name...), "_total counter\n"...)
			case "gauge", "histogram", "summary":
				return append(append(out, line...), '\n')
			default:
				return append(append(append(out, "# TYPE "...), name...), " untyped\n"...)
			}
		case "HELP":
			// Kept as is: a counter's HELP names a family with no samples
			// once its TYPE has the suffix, which the parser drops.
			return append(append(out, line...), '\n')
		}
		return out
	}
	// name{labels} value [timestamp] [# exemplar]
	end := seriesEnd(line)
	rest := bytes.TrimLeft(line[end:], " ")
	if i := bytes.IndexByte(rest, ' '); i >= 0 {
		rest = rest[:i]
	}
	out = append(out, line[:end]...)
	out = append(out, ' ')
	out = append(out, rest...)
	return append(out, '\n')
}

// seriesEnd is where a sample line's name and label set end (label values may
// hold spaces, braces and escaped quotes).
func seriesEnd(line []byte) int {
	end := 0
	for end < len(line) && line[end] != '{' && line[end] != ' ' {
		end++
	}
	if end == len(line) || line[end] != '{' {
		return end
	}
	inQuote, esc := false, false
	for end++; end < len(line); end++ {
		c := line[end]
		switch {
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			inQuote = !inQuote
		case c == '}' && !inQuote:
			return end + 1
		}
	}
	return end
}
