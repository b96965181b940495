package servermetrics

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// maxSkippedLines bounds how many bad lines one body may lose before the
// whole body is refused: a few garbage lines are an exporter's bug, hundreds
// mean the body is not metrics at all.
const maxSkippedLines = 20

// parsed is one body read into metric families.
type parsed struct {
	families map[string]*dto.MetricFamily
	// skipped counts the lines dropped as unparseable; firstSkip says why
	// the first one was.
	skipped     int
	firstSkip   string
	openMetrics bool
}

// errNotMetrics marks a body that is a web page or JSON, not an exposition.
var errNotMetrics = errors.New("not a Prometheus exposition")

// parseBody reads a /metrics body with expfmt's text parser. OpenMetrics
// bodies are first rewritten to the text format (expfmt decodes only that
// and protobuf). A line the parser refuses is dropped and the body parsed
// again, so one garbage line costs that line, not the scrape.
func parseBody(body []byte, contentType string) (parsed, error) {
	var out parsed
	media, _, _ := mime.ParseMediaType(contentType)
	trimmed := bytes.TrimSpace(body)
	switch {
	case media == "text/html" || media == "application/json" ||
		bytes.HasPrefix(trimmed, []byte("<")) || bytes.HasPrefix(trimmed, []byte("{")) || bytes.HasPrefix(trimmed, []byte("[")):
		what := "an HTML page"
		if media == "application/json" || (len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')) {
			what = "JSON"
		}
		return out, fmt.Errorf("%w: the endpoint answered %s (Content-Type %q)", errNotMetrics, what, contentType)
	case len(trimmed) == 0:
		return out, fmt.Errorf("%w: the endpoint answered an empty body", errNotMetrics)
	}
	if media == "application/openmetrics-text" || bytes.HasSuffix(trimmed, []byte("# EOF")) {
		out.openMetrics = true
		body = openMetricsToText(body)
	}
	if body[len(body)-1] != '\n' {
		body = append(body[:len(body):len(body)], '\n')
	}
	var lines [][]byte // split only once a line has to go
	for {
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(bytes.NewReader(body))
		if err == nil {
			out.families = fams
			return out, nil
		}
		if lines == nil {
			lines = bytes.SplitAfter(body, []byte("\n"))
		}
		var pe expfmt.ParseError
		if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > len(lines) || out.skipped >= maxSkippedLines {
			if out.skipped > 0 {
				return out, fmt.Errorf("%w: %d lines could not be parsed (first: %s)", errNotMetrics, out.skipped+1, out.firstSkip)
			}
			return out, fmt.Errorf("%w: %s", errNotMetrics, err.Error())
		}
		if out.skipped == 0 {
			out.firstSkip = fmt.Sprintf("%s: %q", strings.TrimPrefix(pe.Error(), "text format parsing error in "), clip(string(lines[pe.Line-1]), 80))
		}
		out.skipped++
		lines = append(lines[:pe.Line-1], lines[pe.Line:]...)
		body = bytes.Join(lines, nil)
	}
}

// clip shortens s for a message.
func clip(s string, n int) string {
	s = strings.TrimRight(s, "\n")
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
