package dataset

// Message is one chat message in OpenAI's shape.
type Message struct {
	Role    string
	Content string
}

// Item is one prompt of a dataset, ready to send. Items are shared read-only by
// every VU of a process; never modify one after the dataset is built.
type Item struct {
	ID       string
	Category string
	Messages []Message
	// PromptTokens counts the content of every message with the dataset's
	// tokenizer. A server adds a few template tokens per message on top.
	PromptTokens int
	MaxTokens    int
	// Turn is 1 for a single prompt and n for the n-th user turn of a
	// conversation (whose history is in Messages).
	Turn         int
	Conversation string
	// PrefixTokens > 0 when the item starts with one of the shared prefixes
	// (a prefix-cache scenario); PrefixID says which.
	PrefixTokens int
	PrefixID     int
	// CacheBust is set on draws that start with a unique nonce.
	CacheBust bool
	// Images go with the last user turn (ImageOptions), made on each draw.
	Images []Image

	index int // position in its dataset
}

// Prompt is the last user message: what a single-prompt API would send.
func (it Item) Prompt() string {
	for i := len(it.Messages) - 1; i >= 0; i-- {
		if it.Messages[i].Role == "user" {
			return it.Messages[i].Content
		}
	}
	if len(it.Messages) > 0 {
		return it.Messages[len(it.Messages)-1].Content
	}
	return ""
}

// SharedPrefix says whether the item starts with a shared prefix.
func (it Item) SharedPrefix() bool { return it.PrefixTokens > 0 }
