package runrecord

// CostRecord is a group's cost in the run record.
type CostRecord struct {
	Currency     string  `json:"currency"`
	Calls        uint64  `json:"calls"`
	Total        float64 `json:"total"`
	Per1000Calls float64 `json:"per_1000_calls"`
	SavedByCache float64 `json:"saved_by_cache"`
}

// Merge adds another record's cost (merging the records of k6 instances).
func (cr *CostRecord) Merge(o *CostRecord) *CostRecord {
	if o == nil {
		return cr
	}
	c := Cost{}
	if cr != nil {
		c = Cost{Calls: cr.Calls, Total: cr.Total, Saved: cr.SavedByCache, Currency: cr.Currency}
	}
	c.Merge(Cost{Calls: o.Calls, Total: o.Total, Saved: o.SavedByCache, Currency: o.Currency})
	return &CostRecord{Currency: c.Currency, Calls: c.Calls, Total: c.Total, Per1000Calls: c.Per1000(), SavedByCache: c.Saved}
}

// Cost adds up what the calls of a group cost, for clients with prices. Failed
// calls count too: a provider bills the tokens it produced before failing.
type Cost struct {
	Calls    uint64  // priced calls
	Total    float64 // their cost
	Saved    float64 // what cached prompt tokens did not cost
	Currency string  // the first priced call's; "mixed" when clients differ
}

func (c *Cost) Merge(o Cost) {
	if o.Calls == 0 {
		return
	}
	switch {
	case c.Calls == 0:
		c.Currency = o.Currency
	case c.Currency != o.Currency:
		c.Currency = "mixed"
	}
	c.Calls += o.Calls
	c.Total += o.Total
	c.Saved += o.Saved
}

// Per1000 is the cost of a thousand calls at this group's mean.
func (c Cost) Per1000() float64 {
	if c.Calls == 0 {
		return 0
	}
	return 1000 * c.Total / float64(c.Calls)
}
