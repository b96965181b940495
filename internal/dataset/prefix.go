package dataset

import (
	"errors"
	"fmt"
	"math"
)

// prefixSet holds the shared prefixes of a cache scenario: the same
// long system prompt or document in front of many requests, which a server
// with prefix caching computes once.
type prefixSet struct {
	texts    []string
	tokens   int
	fraction float64
}

// maxPrefixTokens keeps a typo (tokens: 1e6) from building a gigabyte.
const maxPrefixTokens = 200_000

func makePrefixes(c *counter, seed uint64, o SharedPrefixOptions) (*prefixSet, error) {
	if o.Count == 0 && o.Tokens == 0 && o.Fraction == 0 {
		return &prefixSet{}, nil
	}
	if o.Count < 1 || o.Tokens < 1 || o.Tokens > maxPrefixTokens {
		return nil, fmt.Errorf("sharedPrefix: need count >= 1 and 1 <= tokens <= %d, got count %d tokens %d",
			maxPrefixTokens, o.Count, o.Tokens)
	}
	f := o.Fraction
	if f == 0 {
		f = 1
	}
	if f < 0 || f > 1 || math.IsNaN(f) {
		return nil, errors.New("sharedPrefix: fraction must be in (0, 1]")
	}
	p := &prefixSet{tokens: o.Tokens, fraction: f}
	for i := range o.Count {
		r := streamFor(seed, "\x00prefix", i)
		g := grammar{r}
		l := layout{
			head: "You are the assistant of the " + g.pick(teams) + " team. Follow the policies below.\n\n",
			body: func() []string { return words(" " + g.sentence()) },
		}
		text, err := c.fit(l, o.Tokens, func() string { return fillers[r.IntN(len(fillers))] })
		if err != nil {
			return nil, fmt.Errorf("sharedPrefix %d: %w", i, err)
		}
		p.texts = append(p.texts, text)
	}
	return p, nil
}

// assign says which prefix variant v gets, or -1. Prefixed variants are
// spread evenly (variant v is prefixed when ⌊(v+1)·f⌋ > ⌊v·f⌋), so the share
// of prefixed draws matches the fraction in every category.
func (p *prefixSet) assign(v int) int {
	if len(p.texts) == 0 {
		return -1
	}
	before := int(math.Floor(float64(v) * p.fraction))
	after := int(math.Floor(float64(v+1) * p.fraction))
	if after == before {
		return -1
	}
	return before % len(p.texts)
}
