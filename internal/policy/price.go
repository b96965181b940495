package policy

import "github.com/llmstream/xk6-llmstream/internal/config"

// Bill is what a call cost; Priced is false when no route had prices.
type Bill struct {
	Cost     config.Cost
	Currency string // "mixed" when the routes bill in different currencies
	Priced   bool
}

// Price is what the call cost, every attempt's tokens priced by its route's
// client (a provider bills a failed attempt's output too).
func (o *Outcome[I]) Price() (b Bill) {
	for _, a := range o.Attempts {
		p := a.Route.Prices
		if p == nil {
			continue
		}
		b.Cost = b.Cost.Plus(p.Cost(a.Result.Usage, a.Result.OutputTokens))
		if !b.Priced {
			b.Currency = p.Currency
		} else if b.Currency != p.Currency {
			b.Currency = "mixed"
		}
		b.Priced = true
	}
	return b
}
