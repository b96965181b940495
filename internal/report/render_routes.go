package report

import (
	"fmt"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/record"
)

func writeRoutesText(b *strings.Builder, r *Run) {
	keys, groups := r.Routes()
	if !routesToShow(keys) {
		return
	}
	w := len("client · route · model")
	for _, k := range keys {
		w = max(w, len(k.Label()))
	}
	fmt.Fprintf(b, "\n  %-*s %9s %7s %18s %18s %18s %20s\n", w, "client · route · model", "requests", "failed", "TTFT p50", "TTFT p95", "E2E p50", "tok/s p50")
	starred := false
	for _, k := range keys {
		g := groups[k]
		cells := []string{fmtQuantileMS(g.S(record.DistTTFT), 0.5), fmtQuantileMS(g.S(record.DistTTFT), 0.95),
			fmtQuantileMS(g.S(record.DistE2E), 0.5), fmtQuantile(record.DistTokensPerSec, g.S(record.DistTokensPerSec), 0.5)}
		starred = starred || anyStarred(cells)
		fmt.Fprintf(b, "  %-*s %9d %7s %18s %18s %18s %20s\n", w, k.Label(), g.Requests, fmtPct(g.FailureRate()), cells[0], cells[1], cells[2], cells[3])
	}
	if starred {
		fmt.Fprintf(b, "  %s\n", tooFewLegend())
	}
}
