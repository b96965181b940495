package record

// How the report keeps a figure: the Keep of its row. The report's
// distributions are not a list of their own: they are the rows that keep
// one, in the table's order, so a figure the report keeps is one row (its
// name is the run record's JSON key, read back by later runs).

// Dist names a distribution the report keeps of a figure: the key of the run
// record's metrics, so a name never changes (records written before are
// read back as baselines and merged).
type Dist string

// The distributions the report's rules and tables read by name. A row keeps
// one by naming it in its Keep; a distribution the report only stores and
// shows needs no constant (its row names it).
const (
	DistTTFB          Dist = "ttfb"
	DistTTFT          Dist = "ttft"
	DistTTFTAnswer    Dist = "ttft_answer"
	DistE2E           Dist = "e2e"
	DistGap           Dist = "gap"
	DistTPOT          Dist = "tpot"
	DistTokensPerSec  Dist = "tokens_per_sec" // #nosec G101 -- a distribution's name, not a credential
	DistClientParse   Dist = "client_parse"
	DistConnect       Dist = "connect"
	DistEventLag      Dist = "event_lag"
	DistNetworkShare  Dist = "network_share"
	DistTTFTCacheHit  Dist = "ttft_cache_hit"
	DistTTFTCacheMiss Dist = "ttft_cache_miss"
	DistClientLag     Dist = "client_lag"
	DistDispatchDelay Dist = "dispatch_delay"
	DistTTFTFromDue   Dist = "ttft_from_due"
	DistE2EFromDue    Dist = "e2e_from_due"
)

// Keep is how the report keeps a figure of a call (the zero Keep: it keeps
// none of it in a distribution).
type Keep struct {
	// Dist is the distribution its values go to ("" for none), one value
	// per call (Figure.Kept), a failed call's as the row's Failed says.
	Dist Dist
	// PerEvent: the figure has many values per call (the gaps), which the
	// report summarises itself before it takes its lock; Figure.Kept has
	// none.
	PerEvent bool
	// Raw: the record also keeps a uniform sample of the raw values (the
	// baseline comparison's bootstrap resamples them).
	Raw bool
	// Latency: the report's latency tables show it, under the row's Help.
	Latency bool
	// Tally names the record's exact counter of the figure (a JSON key of
	// the category record or its tallies), "" for none.
	Tally string
}

// Dists is every distribution the report keeps, in the order of the rows
// that keep them: the report's latency tables list theirs in this order.
var Dists = distsOf(Figures) //nolint:gochecknoglobals // derived once from the table

// SampledDists are the distributions whose raw values the record also keeps
// a uniform sample of (Keep.Raw), in the order of Dists.
var SampledDists = sampledOf(Dists) //nolint:gochecknoglobals // derived once from the table

func sampledOf(dists []Dist) []Dist {
	var out []Dist
	for _, d := range dists {
		if d.Row().Keep.Raw {
			out = append(out, d)
		}
	}
	return out
}

// distRows and distPlaces are each distribution's row in Figures and its
// place in Dists.
var distRows, distPlaces = placesOf(Figures) //nolint:gochecknoglobals // derived once from the table

func distsOf(table []Figure[Call]) []Dist {
	var out []Dist
	for i := range table {
		if d := table[i].Keep.Dist; d != "" {
			out = append(out, d)
		}
	}
	return out
}

func placesOf(table []Figure[Call]) (rows, places map[Dist]int) {
	rows, places = map[Dist]int{}, map[Dist]int{}
	for i := range table {
		d := table[i].Keep.Dist
		if d == "" {
			continue
		}
		if _, twice := rows[d]; twice {
			panic("record: two rows keep the distribution " + string(d)) // a typo in the table, caught by any test
		}
		rows[d], places[d] = i, len(places)
	}
	return rows, places
}

// DistByName is the distribution of that name; ok is false when no row keeps
// one (a record written by a later version may have more).
func DistByName(name string) (Dist, bool) {
	_, ok := distRows[Dist(name)]
	return Dist(name), ok
}

// Row is the row of Figures that keeps d. It panics for a name no row keeps:
// only a constant above or a row's own Keep is ever passed, and any test
// that reads it finds the typo.
func (d Dist) Row() *Figure[Call] {
	i, ok := distRows[d]
	if !ok {
		panic("record: no row keeps the distribution " + string(d))
	}
	return &Figures[i]
}

// Index is d's place in Dists (it panics as Row does).
func (d Dist) Index() int {
	i, ok := distPlaces[d]
	if !ok {
		panic("record: no row keeps the distribution " + string(d))
	}
	return i
}

// IsDuration says whether d's values are times (ms).
func (d Dist) IsDuration() bool { return d.Row().Unit == Duration }

// String is the name.
func (d Dist) String() string { return string(d) }
