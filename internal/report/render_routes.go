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
	fmt.Fprintf(b, "\n  %-*s %9s %7s %9s %9s %9s %10s\n", w, "client · route · model", "requests", "failed", "TTFT p50", "TTFT p95", "E2E p50", "tok/s p50")
	for _, k := range keys {
		g := groups[k]
		fmt.Fprintf(b, "  %-*s %9d %7s %9s %9s %9s %10s\n", w, k.Label(), g.Requests, fmtPct(g.FailureRate()),
			fmtMS(q50(g.S(record.DistTTFT))), fmtMS(g.S(record.DistTTFT).Quantile(0.95)), fmtMS(q50(g.S(record.DistE2E))),
			fmtMetric(record.DistTokensPerSec, q50(g.S(record.DistTokensPerSec))))
	}
}
