package servermetrics

// Merge combines the views of several k6 instances. A server's counters are
// server-wide: every instance that scraped the same endpoint saw the same
// totals, so adding their deltas would count the server's work once per
// instance. Each endpoint is kept once, from the instance whose run window
// is the widest (it began first or ended last, so it covers the others).
func Merge(views ...[]View) []View {
	var out []View
	at := map[string]int{}
	for _, vs := range views {
		for _, v := range vs {
			i, seen := at[v.Endpoint]
			if !seen {
				at[v.Endpoint] = len(out)
				out = append(out, v)
				continue
			}
			if wider(v, out[i]) {
				out[i] = v
			}
		}
	}
	return out
}

func wider(a, b View) bool {
	switch {
	case a.Run == nil:
		return false
	case b.Run == nil:
		return true
	}
	return a.Run.To.Sub(a.Run.From) > b.Run.To.Sub(b.Run.From)
}
