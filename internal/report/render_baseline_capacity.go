package report

import (
	"bytes"
	"fmt"
	"html"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// A capacity search's answer against the baseline's: the one number a
// pipeline gates on, compared so that a drop between two runs is a finding
// even when no single latency row moved past its interval.

func writeCapacityChangeText(b *strings.Builder, ch *runrecord.CapacityChange) {
	if ch == nil {
		return
	}
	fmt.Fprintf(b, "\n  baseline, capacity: %s: %s\n", ch.Verdict, capacityChangeText(ch))
}

func writeCapacityChangeHTML(b *bytes.Buffer, ch *runrecord.CapacityChange) {
	if ch == nil {
		return
	}
	fmt.Fprintf(b, `<p id="capacity-comparison">Capacity against the baseline: <span class="%s">%s</span>: %s</p>`+"\n",
		verdictClass(ch.Verdict), ch.Verdict, html.EscapeString(capacityChangeText(ch)))
}
