package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/record"
)

// fmtMS prints a millisecond value the way a tester reads it.
func fmtMS(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 10000:
		return fmt.Sprintf("%.1fs", v/1000)
	case v >= 1000:
		return fmt.Sprintf("%.2fs", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0fms", v)
	case v >= 10:
		return fmt.Sprintf("%.1fms", v)
	default:
		return fmt.Sprintf("%.2fms", v)
	}
}

// fmtMetric prints a value of metric m with its unit.
func fmtMetric(m record.Dist, v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case m == record.DistTokensPerSec:
		return fmt.Sprintf("%.1f/s", v)
	case m == record.DistNetworkShare:
		return fmtPct(v)
	default:
		return fmtMS(v)
	}
}

func fmtPct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*v)
}

// fmtLevel prints a level with the digits a search's precision gives it.
func fmtLevel(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func fmtOptLevel(v *float64) string {
	if v == nil {
		return "unknown"
	}
	return fmtLevel(*v)
}

// fmtOptMS prints a window's percentile; "—" when it was not measured.
func fmtOptMS(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmtMS(*v)
}

func fmtOptNum(v *float64) string {
	if v == nil {
		return "—"
	}
	return fmt.Sprintf("%.1f", *v)
}

func fmtSigned(v float64) string {
	if v >= 0 {
		return "+" + fmtMS(v)
	}
	return "-" + fmtMS(-v)
}

func errorList(m map[string]uint64) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || (m[keys[i]] == m[keys[j]] && keys[i] < keys[j]) })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s:%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func share(y float64) string { return strconv.FormatFloat(100*y, 'g', 4, 64) + "%" }
