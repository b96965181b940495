package report

import (
	"fmt"
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// How the comparison's rows say what they cannot tell: a verdict of a
// confounded comparison (the runs' prefix caches differed) is printed with
// that qualification, and the rows too few calls decide are gathered, per
// category and sizes, into one line each instead of a row per figure.

// shownVerdict is a row's verdict as the text and HTML print it: a better
// or worse of a confounded comparison says so.
func shownVerdict(verdict string, cmp *runrecord.Comparison) string {
	if cmp.Confounded != nil && (verdict == runrecord.VerdictBetter || verdict == runrecord.VerdictWorse) {
		return verdict + " (confounded)"
	}
	return verdict
}

// tooFewGroup is the figures of one row label that rest on too few calls,
// with the same calls on each side.
type tooFewGroup struct {
	label       string
	calls, base uint64
	figures     []string // "ttft p99"
	need        map[string]int
	stats       []string // the stats in the order first seen, for the needs
}

// why says how many calls each side had and each stat needs.
func (g tooFewGroup) why() string {
	needs := make([]string, len(g.stats))
	for i, st := range g.stats {
		needs[i] = fmt.Sprintf("a %s needs %d", st, g.need[st])
	}
	return fmt.Sprintf("%d calls here, %d in the baseline; %s on each side", g.calls, g.base, strings.Join(needs, ", "))
}

// tooFewGroups gathers the rows whose verdict is too few calls.
func tooFewGroups(rows []runrecord.ComparisonRow) []tooFewGroup {
	var out []tooFewGroup
	for _, row := range rows {
		if row.Verdict != runrecord.VerdictTooFew {
			continue
		}
		i := len(out) - 1
		if i < 0 || out[i].label != row.Label() || out[i].calls != row.Calls || out[i].base != row.BaselineCalls {
			out = append(out, tooFewGroup{label: row.Label(), calls: row.Calls, base: row.BaselineCalls, need: map[string]int{}})
			i++
		}
		g := &out[i]
		g.figures = append(g.figures, row.Metric+" "+row.Stat)
		if _, seen := g.need[row.Stat]; !seen {
			g.stats = append(g.stats, row.Stat)
		}
		g.need[row.Stat] = row.NeedCalls
	}
	return out
}

// tooFewCount is the summary line's tail: how many figures too few calls
// left undecided ("" when none).
func tooFewCount(rows []runrecord.ComparisonRow) string {
	n := 0
	for _, row := range rows {
		if row.Verdict == runrecord.VerdictTooFew {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d rest on too few calls to tell", n)
}

// tooFewTitle is an HTML row's tooltip for a verdict of too few calls.
func tooFewTitle(row runrecord.ComparisonRow) string {
	return fmt.Sprintf("%d calls here, %d in the baseline; a %s needs %d on each side", row.Calls, row.BaselineCalls, row.Stat, row.NeedCalls)
}
