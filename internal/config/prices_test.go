package config

import (
	"math"
	"strings"
	"testing"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestPricesCost(t *testing.T) {
	c, err := ParseClient(map[string]any{
		"baseURL": "http://127.0.0.1:1",
		"prices":  map[string]any{"input": 2.5, "cachedInput": 1.25, "output": int64(10), "reasoning": 20.0, "currency": "EUR"},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := c.Prices
	if p == nil || p.Currency != "EUR" {
		t.Fatalf("prices not read: %+v", p)
	}
	// 1 000 prompt tokens of which 400 cached; 300 output of which 100 reasoning.
	cost := p.Cost(&protocol.Usage{PromptTokens: 1000, CachedTokens: 400, ReasoningTokens: 100}, 300)
	want := Cost{Input: 600 * 2.5e-6, CachedInput: 400 * 1.25e-6, Output: 200 * 10e-6, Reasoning: 100 * 20e-6, Saved: 400 * 1.25e-6}
	if !near(cost.Input, want.Input) || !near(cost.CachedInput, want.CachedInput) || !near(cost.Output, want.Output) ||
		!near(cost.Reasoning, want.Reasoning) || !near(cost.Saved, want.Saved) {
		t.Fatalf("cost = %+v, want %+v", cost, want)
	}
	if !near(cost.Total(), want.Input+want.CachedInput+want.Output+want.Reasoning) {
		t.Fatalf("total = %v", cost.Total())
	}
	if two := cost.Plus(cost); !near(two.Total(), 2*cost.Total()) || !near(two.Saved, 2*cost.Saved) {
		t.Fatalf("two calls: %+v", two)
	}
}

func TestPricesDefaults(t *testing.T) {
	c, err := ParseClient(map[string]any{"baseURL": "http://127.0.0.1:1", "prices": map[string]any{"input": 1.0, "output": 4.0}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Prices.Currency != DefaultCurrency {
		t.Fatalf("currency = %q", c.Prices.Currency)
	}
	// Unpriced cache and reasoning cost what input and output do: no saving claimed.
	cost := c.Prices.Cost(&protocol.Usage{PromptTokens: 10, CachedTokens: 10, ReasoningTokens: 5}, 10)
	if !near(cost.Total(), 10*1e-6+10*4e-6) || cost.Saved != 0 {
		t.Fatalf("cost = %+v", cost)
	}
	// Without usage only the output is priced.
	if cost := c.Prices.Cost(nil, 1000); !near(cost.Total(), 1000*4e-6) {
		t.Fatalf("no usage: %+v", cost)
	}
	if c, _ := ParseClient(map[string]any{"baseURL": "http://127.0.0.1:1"}); c.Prices != nil {
		t.Fatal("no prices given, yet prices set")
	}
}

func TestPricesErrors(t *testing.T) {
	for path, prices := range map[string]map[string]any{
		"prices.ouput":  {"input": 1.0, "ouput": 2.0},
		"prices.input":  {"input": -1.0},
		"prices.output": {"output": "cheap"},
	} {
		_, err := ParseClient(map[string]any{"baseURL": "http://127.0.0.1:1", "prices": prices})
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(path, "prices.")) {
			t.Errorf("%s: err = %v", path, err)
		}
	}
}

func TestHTTPVersionOption(t *testing.T) {
	for _, v := range []string{HTTPAuto, HTTP1, HTTP2} {
		c, err := ParseClient(map[string]any{"baseURL": "http://127.0.0.1:1", "http": v})
		if err != nil || c.HTTP != v {
			t.Fatalf("http %q: %v, %+v", v, err, c)
		}
	}
	if c, _ := ParseClient(map[string]any{"baseURL": "http://127.0.0.1:1"}); c.HTTP != HTTPAuto {
		t.Fatalf("default http = %q", c.HTTP)
	}
	_, err := ParseClient(map[string]any{"baseURL": "http://127.0.0.1:1", "http": "2.0"})
	if err == nil || !strings.Contains(err.Error(), "http must be one of auto, 1.1, 2") {
		t.Fatalf("http '2.0': %v", err)
	}
}
