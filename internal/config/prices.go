package config

import (
	"math"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// Prices are what one million tokens of each kind cost, in Currency. A call's
// cost is computed from the token counts the server reported, so a price list
// turns the same run into latency and spend side by side.
type Prices struct {
	Input float64 `opt:"input" want:"a price per million prompt tokens"`
	// CachedInput prices prompt tokens served from the provider's prompt cache;
	// unset means they cost what Input does (no saving is claimed).
	CachedInput *float64 `opt:"cachedInput" want:"a price per million cached prompt tokens"`
	Output      float64  `opt:"output" want:"a price per million output tokens"`
	// Reasoning prices reasoning tokens (part of the output count); unset means Output.
	Reasoning *float64 `opt:"reasoning" want:"a price per million reasoning tokens"`
	Currency  string   `opt:"currency"` // a label for reports, e.g. "USD"
}

// DefaultCurrency labels prices given without a currency.
const DefaultCurrency = "USD"

func (p *Prices) setDefaults() { *p = Prices{Currency: DefaultCurrency} }

func (p *Prices) check() error {
	for _, f := range []struct {
		name string
		v    *float64
	}{{"input", &p.Input}, {"cachedInput", p.CachedInput}, {"output", &p.Output}, {"reasoning", p.Reasoning}} {
		if f.v != nil && (*f.v < 0 || math.IsNaN(*f.v) || math.IsInf(*f.v, 0)) {
			return fieldErr(f.name, "must be a price of 0 or more, got %v", *f.v)
		}
	}
	return nil
}

// Cost is what one call cost, by kind of token.
type Cost struct {
	Input, CachedInput, Output, Reasoning float64
	// Saved is what the cached prompt tokens did not cost compared with
	// uncached ones (0 when CachedInput is not priced).
	Saved float64
}

// Plus is the cost of two calls (or attempts) together.
func (c Cost) Plus(o Cost) Cost {
	return Cost{
		Input: c.Input + o.Input, CachedInput: c.CachedInput + o.CachedInput, Output: c.Output + o.Output,
		Reasoning: c.Reasoning + o.Reasoning, Saved: c.Saved + o.Saved,
	}
}

// Total is the call's cost.
func (c Cost) Total() float64 { return c.Input + c.CachedInput + c.Output + c.Reasoning }

// Cost prices one call's usage. outputTokens is the call's output count (the
// usage's when reported, else the client's own count), so a server that does
// not report usage still gets its output priced; its prompt is then unpriced.
func (p *Prices) Cost(u *protocol.Usage, outputTokens int64) Cost {
	const perToken = 1e-6
	cachedPrice, reasoningPrice := p.Input, p.Output
	if p.CachedInput != nil {
		cachedPrice = *p.CachedInput
	}
	if p.Reasoning != nil {
		reasoningPrice = *p.Reasoning
	}
	var c Cost
	reasoning := int64(0)
	if u != nil {
		cached := min(max(u.CachedTokens, 0), max(u.PromptTokens, 0))
		c.Input = float64(u.PromptTokens-cached) * p.Input * perToken
		c.CachedInput = float64(cached) * cachedPrice * perToken
		c.Saved = float64(cached) * (p.Input - cachedPrice) * perToken
		reasoning = min(max(u.ReasoningTokens, 0), max(outputTokens, 0))
	}
	c.Output = float64(max(outputTokens-reasoning, 0)) * p.Output * perToken
	c.Reasoning = float64(reasoning) * reasoningPrice * perToken
	return c
}
