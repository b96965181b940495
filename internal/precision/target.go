package precision

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/record"
)

// durations are the figures a target can bound: every duration the report
// keeps a distribution of (record.Dists), read from a call by the same rule.
func durations() []string {
	var out []string
	for _, d := range record.Dists {
		if d.IsDuration() {
			out = append(out, d.String())
		}
	}
	return out
}

// Target is one percentile to know to a margin.
type Target struct {
	Text     string  // as written, with its figure: "ttft p95±5%"
	Figure   string  // a duration the report keeps: ttft, ttfb, tpot, e2e…
	Quantile float64 // 0.95 for p95
	// Margin is the largest distance allowed between the estimate and either
	// end of its interval: a share of the estimate when Relative, else ms.
	Margin   float64
	Relative bool
}

// ParseTargets reads {ttft: 'p95±5%', e2e: 'p99±200ms'} (ASCII "+-" for
// "±"); where names the option in errors.
func ParseTargets(where string, spec map[string]string) ([]Target, error) {
	if len(spec) == 0 {
		return nil, fmt.Errorf("%s: no target (give e.g. {ttft: 'p95±5%%'})", where)
	}
	keys := make([]string, 0, len(spec))
	for k := range spec {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Target, 0, len(keys))
	for _, k := range keys {
		t, err := parseTarget(k, spec[k])
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", where, k, err)
		}
		out = append(out, t)
	}
	return out, nil
}

func parseTarget(figure, spec string) (Target, error) {
	if d, ok := record.DistByName(figure); !ok || !d.IsDuration() {
		return Target{}, fmt.Errorf("unknown figure %q (%s)", figure, strings.Join(durations(), ", "))
	}
	s := strings.ReplaceAll(strings.TrimSpace(spec), " ", "")
	s = strings.Replace(s, "+-", "±", 1)
	pct, margin, ok := strings.Cut(s, "±")
	if !ok || !strings.HasPrefix(pct, "p") {
		return Target{}, fmt.Errorf("%q: want a percentile and a margin, such as 'p95±5%%' or 'p99±200ms'", spec)
	}
	p, err := strconv.ParseFloat(pct[1:], 64)
	if err != nil || !(p > 0 && p < 100) {
		return Target{}, fmt.Errorf("%q: unknown percentile %q (strictly between p0 and p100)", spec, pct)
	}
	t := Target{Text: figure + " " + s, Figure: figure, Quantile: p / 100}
	if share, isShare := strings.CutSuffix(margin, "%"); isShare {
		v, err := strconv.ParseFloat(share, 64)
		if err != nil || !(v > 0 && v < 100) {
			return Target{}, fmt.Errorf("%q: margin %q must be a percentage above 0 and below 100", spec, margin)
		}
		t.Margin, t.Relative = v/100, true
		return t, nil
	}
	d, err := time.ParseDuration(margin)
	if err != nil || d <= 0 {
		return Target{}, fmt.Errorf("%q: margin %q is neither a percentage ('5%%') nor a positive duration ('20ms')", spec, margin)
	}
	t.Margin = float64(d) / float64(time.Millisecond)
	return t, nil
}
