package servermetrics

import (
	"math"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// maxNamedSeries bounds the series one warning names.
const maxNamedSeries = 8

// nonFinite collects the series of one scrape whose value is NaN or ±Inf.
// Exporters write them (a histogram's _sum after a bad observation, a ratio
// of zero to zero): expfmt reads them as the text says, and one such value
// in a sum, a delta or a mean would make the figure NaN, which no JSON
// encoder writes (report() once lost the whole run record to one). Each is
// left out of its figure, which is then unknown, and named in a warning.
type nonFinite struct {
	series   []string // "name{labels} = NaN", in the order found
	seen     map[string]bool
	families map[string]bool // families with at least one such series
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// note records m's value v (of family, with suffix such as "_sum") when it
// is not finite, and says whether it was.
func (n *nonFinite) note(family, suffix string, m *dto.Metric, v float64) bool {
	if finite(v) {
		return false
	}
	name := seriesName(family+suffix, m) + " = " + strconv.FormatFloat(v, 'g', -1, 64)
	if n.seen == nil {
		n.seen, n.families = map[string]bool{}, map[string]bool{}
	}
	n.families[family] = true
	if !n.seen[name] {
		n.seen[name] = true
		n.series = append(n.series, name)
	}
	return true
}

// in says whether family had a series that was not finite.
func (n *nonFinite) in(family string) bool { return n.families[family] }

// String names the series, the first maxNamedSeries of them.
func (n *nonFinite) String() string {
	names := n.series
	more := ""
	if len(names) > maxNamedSeries {
		more = ", and " + strconv.Itoa(len(names)-maxNamedSeries) + " more"
		names = names[:maxNamedSeries]
	}
	return strings.Join(names, ", ") + more
}

// seriesName writes a series as the exposition does: name{label="value",…}.
func seriesName(name string, m *dto.Metric) string {
	labels := m.GetLabel()
	if len(labels) == 0 {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, lp := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(lp.GetName())
		b.WriteByte('=')
		b.WriteString(strconv.Quote(lp.GetValue()))
	}
	b.WriteByte('}')
	return b.String()
}
