package servermetrics

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHTMLAndJSONAreNotMetrics(t *testing.T) {
	for _, c := range []struct{ body, ctype, want string }{
		{"<!DOCTYPE html><html><body>Login</body></html>", "text/html; charset=utf-8", "an HTML page"},
		{"<html>oops</html>", "text/plain", "an HTML page"},
		{`{"num_requests_running": 3}`, "application/json", "JSON"},
		{`[{"name":"x"}]`, "", "JSON"},
		{"   \n", "text/plain", "empty body"},
	} {
		_, err := parseBody([]byte(c.body), c.ctype)
		require.Error(t, err, c.body)
		assert.True(t, errors.Is(err, errNotMetrics))
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestGarbageLinesAreSkippedAndTheRestRead(t *testing.T) {
	body := []byte("# TYPE vllm:num_requests_waiting gauge\n" +
		"vllm:num_requests_waiting 3\n" +
		"this is not a metric line at all\n" +
		"# TYPE vllm:num_requests_running gauge\n" +
		"vllm:num_requests_running{broken=\"x} 2\n" +
		"vllm:num_requests_running 4")
	p, err := parseBody(body, "text/plain")
	require.NoError(t, err)
	assert.Equal(t, 2, p.skipped)
	assert.Contains(t, p.firstSkip, "line 3")
	assert.Contains(t, p.firstSkip, "this is not a metric line")
	s := reduce(p.families, "")
	assert.InDelta(t, 3, s.gauges[RequestsWaiting], 1e-9)
	assert.InDelta(t, 4, s.gauges[RequestsRunning], 1e-9, "the last line has no newline and is still read")
}

func TestTooManyBadLinesRefuseTheBody(t *testing.T) {
	var body []byte
	for range maxSkippedLines + 5 {
		body = append(body, "hello world how are you\n"...)
	}
	_, err := parseBody(body, "text/plain")
	require.Error(t, err)
	assert.True(t, errors.Is(err, errNotMetrics))
	assert.Contains(t, err.Error(), "lines could not be parsed")
}

func TestDuplicateTypeLineIsOneSkippedLine(t *testing.T) {
	body := []byte("# TYPE a gauge\na 1\n# TYPE a gauge\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting 2\n")
	p, err := parseBody(body, "text/plain")
	require.NoError(t, err)
	assert.Equal(t, 1, p.skipped)
	assert.InDelta(t, 2, reduce(p.families, "").gauges[RequestsWaiting], 1e-9)
}

func TestOpenMetricsLineRewrite(t *testing.T) {
	out := string(openMetricsToText([]byte(
		"# TYPE c counter\n# UNIT c seconds\nc_total{a=\"x y } # z\"} 5 1764673200.5 # {t=\"1\"} 1\n# TYPE d_total counter\nd_total 1\n# TYPE s stateset\n# EOF\n")))
	assert.Equal(t, "# TYPE c_total counter\nc_total{a=\"x y } # z\"} 5\n# TYPE d_total counter\nd_total 1\n# TYPE s untyped\n", out)
}
