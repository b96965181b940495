package dataset

// Info summarises a dataset: what a script can print or assert on, and what
// the loader did (masked, skipped).
type Info struct {
	Name       string
	Tokenizer  string
	Items      int
	Categories []CategoryInfo
	// Skipped counts loaded records not kept, by reason.
	Skipped map[string]int
	// Scrubbed counts masked values by kind (email, phone, card, key).
	Scrubbed     map[string]int
	SharedPrefix int  // items starting with a shared prefix
	CacheBust    bool // every draw starts with a unique nonce
}

// CategoryInfo describes one drawn category.
type CategoryInfo struct {
	Name            string
	Items           int
	Weight          float64
	Share           float64 // exact share of draws
	MinPromptTokens int
	MaxPromptTokens int
	MeanPrompt      float64
	MinMaxTokens    int
	MaxMaxTokens    int
}

func (d *Dataset) describe() Info {
	info := Info{Name: d.name, Tokenizer: d.tokenizer, Items: len(d.items), CacheBust: d.bust != nil}
	for i := range d.items {
		if d.items[i].SharedPrefix() {
			info.SharedPrefix++
		}
	}
	for ci, c := range d.cats {
		ct := CategoryInfo{Name: c.name, Items: len(c.items), Weight: c.weight, Share: d.sched.share(ci)}
		sum := 0
		for j, idx := range c.items {
			it := &d.items[idx]
			if j == 0 || it.PromptTokens < ct.MinPromptTokens {
				ct.MinPromptTokens = it.PromptTokens
			}
			if j == 0 || it.MaxTokens < ct.MinMaxTokens {
				ct.MinMaxTokens = it.MaxTokens
			}
			ct.MaxPromptTokens = max(ct.MaxPromptTokens, it.PromptTokens)
			ct.MaxMaxTokens = max(ct.MaxMaxTokens, it.MaxTokens)
			sum += it.PromptTokens
		}
		ct.MeanPrompt = float64(sum) / float64(len(c.items))
		info.Categories = append(info.Categories, ct)
	}
	return info
}
