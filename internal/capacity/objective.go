package capacity

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Figures an objective can judge.
const (
	FigureTTFT   = "ttft"
	FigureTPOT   = "tpot"
	FigureE2E    = "e2e"
	FigureErrors = "errors"
)

// Objective is one objective: a percentile of a call figure under a limit,
// or the error rate under a share.
type Objective struct {
	Text     string  // as written, with its figure: "ttft p95<2s"
	Client   string  // the client whose calls it judges ("" = every call)
	Figure   string  // FigureTTFT, FigureTPOT, FigureE2E or FigureErrors
	Quantile float64 // 0.95 for p95; 0 for errors
	Limit    float64 // ms for durations; a fraction (0.01) for errors
}

// ParseObjectives reads objectives written as k6 threshold-like strings:
// {ttft: 'p95<2s', tpot: 'p95<80ms', e2e: 'p99<30s', errors: '<1%'}.
// where names the option in errors (e.g. "Capacity.search slo").
func ParseObjectives(where, client string, slo map[string]string) ([]Objective, error) {
	if len(slo) == 0 {
		return nil, fmt.Errorf("%s: no objective (give e.g. {ttft: 'p95<2s', errors: '<1%%'})", where)
	}
	keys := make([]string, 0, len(slo))
	for k := range slo {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]Objective, 0, len(keys))
	for _, k := range keys {
		o, err := parseObjective(k, slo[k])
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", where, k, err)
		}
		o.Client = client
		out = append(out, o)
	}
	return out, nil
}

func parseObjective(figure, spec string) (Objective, error) {
	s := strings.ReplaceAll(strings.TrimSpace(spec), " ", "")
	o := Objective{Figure: figure, Text: figure + " " + s}
	switch figure {
	case FigureTTFT, FigureTPOT, FigureE2E:
		q, rest, err := splitPercentile(s)
		if err != nil {
			return o, err
		}
		limit, err := parseLimit(rest, parseMillis)
		if err != nil {
			return o, fmt.Errorf("%q: %w", spec, err)
		}
		o.Quantile, o.Limit = q, limit
	case FigureErrors:
		limit, err := parseLimit(s, parseShare)
		if err != nil {
			return o, fmt.Errorf("%q: %w", spec, err)
		}
		if limit >= 1 {
			return o, fmt.Errorf("%q: an error-rate limit must be below 100%%", spec)
		}
		o.Limit = limit
	default:
		return o, fmt.Errorf("unknown figure %q (ttft, tpot, e2e or errors)", figure)
	}
	return o, nil
}

// splitPercentile reads "p95" (or "p99.9") off the front.
func splitPercentile(s string) (q float64, rest string, err error) {
	i := strings.IndexAny(s, "<")
	if !strings.HasPrefix(s, "p") || i < 2 {
		return 0, "", fmt.Errorf("%q: want a percentile and a limit, such as 'p95<2s'", s)
	}
	p, perr := strconv.ParseFloat(s[1:i], 64)
	if perr != nil || !(p > 0 && p < 100) {
		return 0, "", fmt.Errorf("%q: unknown percentile %q (p50, p90, p95, p99, p99.9: strictly between 0 and 100)", s, s[:i])
	}
	return p / 100, s[i:], nil
}

// parseLimit reads "<X" or "<=X" (both: at most X; the figures are
// measured to the microsecond, so the two do not differ in practice).
func parseLimit(s string, value func(string) (float64, error)) (float64, error) {
	switch {
	case strings.HasPrefix(s, "<="):
		s = s[2:]
	case strings.HasPrefix(s, "<"):
		s = s[1:]
	default:
		return 0, fmt.Errorf("want an upper limit: '<' or '<=' then a value, such as '<2s' or '<1%%'")
	}
	v, err := value(s)
	if err != nil {
		return 0, err
	}
	if !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("limit %q is not a non-negative number", s)
	}
	return v, nil
}

// parseMillis reads a Go duration ("2s", "80ms") or a number of ms.
func parseMillis(s string) (float64, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("limit %q is not a duration ('2s', '80ms') or a number of ms", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("limit %q must be positive", s)
	}
	return float64(d) / float64(time.Millisecond), nil
}

// parseShare reads "1%" or a fraction "0.01".
func parseShare(s string) (float64, error) {
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return 0, fmt.Errorf("limit %q is not a percentage", s)
		}
		return v / 100, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("limit %q is not a share ('1%%' or 0.01)", s)
	}
	return v, nil
}

// margin is how far observed is past the limit, normalised: observed /
// limit − 1 (≤ 0 meets it). An error limit of 0 is met only by no error.
func (o Objective) margin(observed float64) float64 {
	if o.Limit == 0 {
		if observed > 0 {
			return 1
		}
		return -1
	}
	return observed/o.Limit - 1
}

// LongestLimit is the largest duration limit of the objectives (0 when they
// judge no duration): a window must be long enough to see calls that slow.
func LongestLimit(objs []Objective) time.Duration {
	var ms float64
	for _, o := range objs {
		if o.Figure != FigureErrors {
			ms = max(ms, o.Limit)
		}
	}
	return time.Duration(ms * float64(time.Millisecond))
}
