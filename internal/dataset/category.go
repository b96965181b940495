package dataset

import (
	"fmt"
	"regexp"
	"sort"
)

// Range is an inclusive interval of token counts.
type Range struct {
	Min, Max int
}

func (r Range) contains(n int) bool { return n >= r.Min && n <= r.Max }

func (r Range) valid() bool { return r.Min >= 0 && r.Max >= r.Min }

// Category is a length class: how long its prompts are, how many tokens its
// requests ask for, and how often it is drawn.
type Category struct {
	Name      string
	Prompt    Range // prompt tokens of each item (the user's part)
	MaxTokens Range // max_tokens of each item, drawn in this range
	Weight    float64
	Variants  int    // distinct items generated
	style     string // which text template generates it
}

// DefaultVariants is how many distinct items a synthetic category gets unless
// told otherwise: enough distinct prompts per class that no single one dominates.
const DefaultVariants = 32

// Built-in length classes (see docs/datasets.md). Long output asks for a long
// answer to a short prompt, which loads the decode phase rather than prefill.
func builtinCategories() map[string]Category {
	return map[string]Category{
		"short":        {Name: "short", Prompt: Range{10, 50}, MaxTokens: Range{128, 128}, style: styleQuestion},
		"medium":       {Name: "medium", Prompt: Range{200, 500}, MaxTokens: Range{256, 256}, style: styleTask},
		"long_context": {Name: "long_context", Prompt: Range{2000, 4000}, MaxTokens: Range{256, 256}, style: styleDocument},
		"long_output":  {Name: "long_output", Prompt: Range{20, 100}, MaxTokens: Range{1000, 2000}, style: styleEssay},
	}
}

// defaultMix follows typical production traffic: medium prompts are the bulk,
// short ones next, the long classes rare.
func defaultMix() map[string]float64 {
	return map[string]float64{"short": 3, "medium": 5, "long_context": 1, "long_output": 1}
}

// BuiltinNames lists the built-in categories.
func BuiltinNames() []string {
	names := make([]string, 0, 4)
	for n := range builtinCategories() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Category names become tag values (llm_ttft{category:...}): keep them short
// and free of characters that need quoting in threshold expressions.
var categoryName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

func validateCategory(c Category) error {
	if !categoryName.MatchString(c.Name) {
		return fmt.Errorf("category name %q: use 1-64 letters, digits, '_', '-' or '.'", c.Name)
	}
	if !c.Prompt.valid() || c.Prompt.Max == 0 {
		return fmt.Errorf("category %q: prompt range [%d, %d] is invalid", c.Name, c.Prompt.Min, c.Prompt.Max)
	}
	if !c.MaxTokens.valid() || c.MaxTokens.Min < 1 {
		return fmt.Errorf("category %q: maxTokens range [%d, %d] is invalid", c.Name, c.MaxTokens.Min, c.MaxTokens.Max)
	}
	if c.Weight < 0 {
		return fmt.Errorf("category %q: weight %v is negative", c.Name, c.Weight)
	}
	if c.Variants < 1 {
		return fmt.Errorf("category %q: variants must be at least 1, got %d", c.Name, c.Variants)
	}
	return nil
}
