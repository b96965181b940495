package docs

// A call's figures are defined once, in internal/record's table: these
// checks hold the JS result's keys to index.d.ts and to the result table of
// docs/client.md, and every llm_* metric to docs/metrics.md and the Grafana
// dashboard, so a figure added to the table without its doc lines (or a doc
// line left behind by a removed figure) fails here.

import (
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// figureNames are the chat table's JS keys and both tables' metric names
// (a metric both have once), sorted.
func figureNames() (keys, metricNames []string) {
	for _, f := range record.Figures {
		if f.Key != "" {
			keys = append(keys, f.Key)
		}
		if f.Metric != "" {
			metricNames = append(metricNames, f.Metric)
		}
	}
	for _, f := range record.RetrievalFigures {
		if f.Metric != "" {
			metricNames = append(metricNames, f.Metric)
		}
	}
	for _, f := range record.JobFigures {
		if f.Metric != "" {
			metricNames = append(metricNames, f.Metric)
		}
	}
	// The server's own metrics (serverMetrics) are not figures of a call, but
	// docs/metrics.md and the dashboard hold them alike.
	for _, m := range servermetrics.Metrics {
		metricNames = append(metricNames, m.Name)
	}
	sort.Strings(keys)
	return keys, uniqueSorted(metricNames)
}

// retrievalKeys are the JS keys of an embed or rerank call's result, sorted.
func retrievalKeys() []string {
	var keys []string
	for _, f := range record.RetrievalFigures {
		if f.Key != "" {
			keys = append(keys, f.Key)
		}
	}
	sort.Strings(keys)
	return keys
}

// tableKeys are the backquoted names of the first column of a markdown
// table's rows in text.
func tableKeys(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(first, -1) {
			out = append(out, m[1])
		}
	}
	return uniqueSorted(out)
}

func TestRetrievalResultKeysMatchTypesAndDocs(t *testing.T) {
	keys := retrievalKeys()
	dts := readText(t, "index.d.ts")
	var typed []string
	member := regexp.MustCompile(`(?m)^    (\w+)\??:`)
	for _, m := range member.FindAllStringSubmatch(between(t, dts, "export interface RetrievalResultFields {", "  }"), -1) {
		typed = append(typed, m[1])
	}
	union := between(t, dts, "export type RetrievalResult = RetrievalResultFields &", "\n")
	for _, m := range regexp.MustCompile(`\b(ok|error):`).FindAllStringSubmatch(union, -1) {
		typed = append(typed, m[1])
	}
	require.Equal(t, keys, uniqueSorted(typed), "an embed or rerank result's keys (internal/record) against index.d.ts's RetrievalResult")
	section := between(t, readText(t, "docs/client.md"), "## The embed and rerank result\n", "## ")
	require.Equal(t, keys, tableKeys(section), "an embed or rerank result's keys against docs/client.md's table")
}

// A job's keys (conv.end()) against index.d.ts's JobResult and
// docs/client.md's job table.
func TestJobKeysMatchTypesAndDocs(t *testing.T) {
	var keys []string
	for _, f := range record.JobFigures {
		if f.Key != "" {
			keys = append(keys, f.Key)
		}
	}
	keys = uniqueSorted(keys)
	var typed []string
	member := regexp.MustCompile(`(?m)^    (\w+)\??:`)
	for _, m := range member.FindAllStringSubmatch(between(t, readText(t, "index.d.ts"), "export interface JobResult {", "  }"), -1) {
		typed = append(typed, m[1])
	}
	require.Equal(t, keys, uniqueSorted(typed), "a job's keys (internal/record) against index.d.ts's JobResult")
	section := between(t, readText(t, "docs/client.md"), "## The job figures\n", "## ")
	require.Equal(t, keys, tableKeys(section), "a job's keys against docs/client.md's job table")
}

func readText(t *testing.T, name string) string {
	t.Helper()
	b, err := fs.ReadFile(repo(t), name)
	require.NoError(t, err)
	return string(b)
}

// between is text from the line holding start to the first line after it
// that begins with end.
func between(t *testing.T, text, start, end string) string {
	t.Helper()
	i := strings.Index(text, start)
	require.GreaterOrEqual(t, i, 0, "%q not found", start)
	rest := text[i+len(start):]
	if j := strings.Index(rest, "\n"+end); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

func uniqueSorted(s []string) []string {
	sort.Strings(s)
	return slices.Compact(s)
}

func TestResultKeysMatchTypesAndDocs(t *testing.T) {
	keys, _ := figureNames()

	// index.d.ts: the members of ChatResultFields (at its own indentation)
	// and those of the ok/error union of ChatResult.
	dts := readText(t, "index.d.ts")
	var typed []string
	member := regexp.MustCompile(`(?m)^    (\w+)\??:`)
	for _, m := range member.FindAllStringSubmatch(between(t, dts, "export interface ChatResultFields {", "  }"), -1) {
		typed = append(typed, m[1])
	}
	union := between(t, dts, "export type ChatResult = ChatResultFields &", "\n")
	for _, m := range regexp.MustCompile(`\b(ok|error):`).FindAllStringSubmatch(union, -1) {
		typed = append(typed, m[1])
	}
	require.Equal(t, keys, uniqueSorted(typed), "the JS result's keys (internal/record) against index.d.ts's ChatResult")

	// docs/client.md: the first column of the result table.
	section := between(t, readText(t, "docs/client.md"), "## The result\n", "## ")
	var documented []string
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(first, -1) {
			documented = append(documented, m[1])
		}
	}
	require.Equal(t, keys, uniqueSorted(documented), "the JS result's keys (internal/record) against docs/client.md's result table")
}

func TestMetricsMatchDocsAndDashboard(t *testing.T) {
	_, names := figureNames()

	// docs/metrics.md: the metrics named in the first column of its table.
	var documented []string
	for _, line := range strings.Split(readText(t, "docs/metrics.md"), "\n") {
		if !strings.HasPrefix(line, "| `llm_") {
			continue
		}
		for _, m := range regexp.MustCompile("`(llm_\\w+)`").FindAllStringSubmatch(strings.Split(line, "|")[1], -1) {
			documented = append(documented, m[1])
		}
	}
	require.Equal(t, names, uniqueSorted(documented), "the llm_* metrics (internal/record) against docs/metrics.md's table")

	// The Grafana dashboard: Prometheus names are k6_<metric> with a suffix
	// (_total, _rate, _seconds, _p95…); every metric has a query, and every
	// query names a metric that exists.
	dash := readText(t, "dashboards/grafana-llmstream.json")
	var queried []string
	for _, m := range regexp.MustCompile(`k6_(llm_\w+)`).FindAllStringSubmatch(dash, -1) {
		queried = append(queried, strings.TrimSuffix(trimPromSuffix(m[1]), "_"))
	}
	queried = uniqueSorted(queried)
	for _, q := range queried {
		require.Contains(t, names, q, "the Grafana dashboard queries %s, which no figure has", q)
	}
	var missing []string
	for _, n := range names {
		if !slices.Contains(queried, n) {
			missing = append(missing, n)
		}
	}
	require.Equal(t, notOnDashboard, missing,
		"llm_* metrics with no query in dashboards/grafana-llmstream.json: give a new one a panel "+
			"(a metric that got one leaves notOnDashboard)")
}

// notOnDashboard are the metrics the Grafana dashboard has no panel for yet,
// sorted. The list only shrinks: a new metric gets its panel with it.
var notOnDashboard = []string{
	"llm_cache_hit", "llm_cached_tokens", "llm_client_lag", "llm_client_parse_time", "llm_conn_opened",
	"llm_conn_reused", "llm_failed", "llm_finish_omitted", "llm_gaps_unsampled", "llm_prompt_tokens", "llm_reasoning_tokens",
	"llm_reconnects", "llm_regression", "llm_server_prefill_time", "llm_server_queue_time", "llm_ttft_late",
}

// trimPromSuffix removes what k6's Prometheus output appends to a metric's
// name: the counter's _total, the rate's _rate, a native histogram's
// _seconds, a trend statistic's _p95, _avg…
func trimPromSuffix(name string) string {
	for _, s := range []string{"_total", "_rate", "_seconds", "_avg", "_min", "_max", "_med", "_count", "_sum"} {
		if strings.HasSuffix(name, s) {
			return strings.TrimSuffix(name, s)
		}
	}
	if i := strings.LastIndex(name, "_p"); i > 0 && strings.Trim(name[i+2:], "0123456789") == "" && len(name) > i+2 {
		return name[:i]
	}
	return name
}

// TestMetricTypesMatchTheTables: docs/metrics.md's type column says what the
// binding registers from a row: its kind, "(time)" for a duration; its
// failed-call column says the row's rule (record.Failed), which a metric two
// tables share has once.
func TestMetricTypesMatchTheTables(t *testing.T) {
	types, rules := map[string]string{}, map[string]string{}
	note := func(metric string, kind record.Kind, unit record.Unit, rule record.Failed) {
		if metric == "" {
			return
		}
		typ := map[record.Kind]string{record.Trend: "Trend", record.Counter: "Counter", record.Rate: "Rate"}[kind]
		if unit == record.Duration {
			typ += " (time)"
		}
		types[metric] = typ
		if r, seen := rules[metric]; seen {
			require.Equalf(t, r, rule.String(), "%s: the tables that share it give it one rule for failed calls", metric)
		}
		rules[metric] = rule.String()
	}
	for _, f := range record.Figures {
		note(f.Metric, f.Kind, f.Unit, f.Failed)
	}
	for _, f := range record.RetrievalFigures {
		note(f.Metric, f.Kind, f.Unit, f.Failed)
	}
	for _, f := range record.JobFigures {
		note(f.Metric, f.Kind, f.Unit, f.Failed)
	}
	checked := 0
	for _, line := range strings.Split(readText(t, "docs/metrics.md"), "\n") {
		if !strings.HasPrefix(line, "| `llm_") {
			continue
		}
		cells := strings.Split(line, "|")
		for _, m := range regexp.MustCompile("`(llm_\\w+)`").FindAllStringSubmatch(cells[1], -1) {
			if want, ok := types[m[1]]; ok {
				require.Equalf(t, want, strings.TrimSpace(cells[2]), "docs/metrics.md's type of %s", m[1])
				require.Greaterf(t, len(cells), 5, "docs/metrics.md's row of %s has no failed-call column", m[1])
				require.Equalf(t, rules[m[1]], strings.TrimSpace(cells[4]), "docs/metrics.md's failed-call rule of %s", m[1])
				checked++
			}
		}
	}
	require.Len(t, types, checked, "every metric of the figure tables has its type checked once")
}
