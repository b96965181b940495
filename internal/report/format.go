package report

import (
	"fmt"
	"math"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
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
func fmtMetric(m runrecord.Metric, v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case m == runrecord.MetricTokensPerSec:
		return fmt.Sprintf("%.1f/s", v)
	case m == runrecord.MetricNetworkShare:
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
