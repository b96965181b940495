package dataset

import "fmt"

// Bucket is a rule that puts loaded records into a category by their token
// counts. Rules are tried in order; the first that matches wins.
type Bucket struct {
	Name string `opt:"name"`
	// Prompt tokens must be in [Min, Max]; Max 0 means no upper limit.
	Prompt Range `opt:"prompt"`
	// MinOutputTokens > 0 matches only records whose expected answer (their
	// max_tokens, or the length of the reference reply) is at least this long.
	MinOutputTokens int `opt:"minOutputTokens"`
	// MaxTokens is the max_tokens of items whose record gives no length.
	MaxTokens int `opt:"maxTokens"`
}

// DefaultBuckets sort loaded prompts into the built-in classes. Unlike the
// synthetic ranges they leave no gaps: a 120-token prompt is short, a
// 1500-token one medium.
func DefaultBuckets() []Bucket {
	return []Bucket{
		{Name: "long_output", MinOutputTokens: 1000, MaxTokens: 1500},
		{Name: "short", Prompt: Range{0, 199}, MaxTokens: 128},
		{Name: "medium", Prompt: Range{200, 1999}, MaxTokens: 256},
		{Name: "long_context", Prompt: Range{2000, 0}, MaxTokens: 256},
	}
}

func (b Bucket) matches(promptTokens, outputTokens int) bool {
	if promptTokens < b.Prompt.Min || (b.Prompt.Max > 0 && promptTokens > b.Prompt.Max) {
		return false
	}
	return b.MinOutputTokens == 0 || outputTokens >= b.MinOutputTokens
}

func validateBuckets(bs []Bucket) error {
	seen := map[string]bool{}
	for i, b := range bs {
		if !categoryName.MatchString(b.Name) {
			return fmt.Errorf("bucket %d: name %q: use 1-64 letters, digits, '_', '-' or '.'", i, b.Name)
		}
		if seen[b.Name] {
			return fmt.Errorf("bucket %q appears twice", b.Name)
		}
		seen[b.Name] = true
		if b.Prompt.Min < 0 || (b.Prompt.Max > 0 && b.Prompt.Max < b.Prompt.Min) {
			return fmt.Errorf("bucket %q: prompt range [%d, %d] is invalid", b.Name, b.Prompt.Min, b.Prompt.Max)
		}
		if b.MaxTokens < 0 || b.MinOutputTokens < 0 {
			return fmt.Errorf("bucket %q: negative token count", b.Name)
		}
	}
	return nil
}
