package policy

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func billed(prices *config.Prices, in, out int64) Attempt[string] {
	return Attempt[string]{
		Route:  &Route[string]{Prices: prices},
		Result: &stream.Result{Usage: &protocol.Usage{PromptTokens: in, CompletionTokens: out}, OutputTokens: out},
	}
}

// Every attempt is billed by its own route's prices, a failed one too.
func TestPriceBillsEveryAttempt(t *testing.T) {
	t.Parallel()
	usd := &config.Prices{Input: 1, Output: 2, Currency: "USD"}
	o := &Outcome[string]{Attempts: []Attempt[string]{billed(usd, 1e6, 1e6), billed(usd, 1e6, 0)}}
	b := o.Price()
	require.True(t, b.Priced)
	require.Equal(t, "USD", b.Currency)
	require.InDelta(t, 2, b.Cost.Input, 1e-9)
	require.InDelta(t, 2, b.Cost.Output, 1e-9)
}

func TestPriceOfMixedAndUnpricedRoutes(t *testing.T) {
	t.Parallel()
	usd := &config.Prices{Input: 1, Currency: "USD"}
	eur := &config.Prices{Input: 1, Currency: "EUR"}
	o := &Outcome[string]{Attempts: []Attempt[string]{billed(usd, 10, 0), billed(nil, 10, 0), billed(eur, 10, 0)}}
	require.Equal(t, "mixed", o.Price().Currency)
	o = &Outcome[string]{Attempts: []Attempt[string]{billed(nil, 10, 5)}}
	require.Equal(t, Bill{}, o.Price(), "no prices: not priced, not free")
}
