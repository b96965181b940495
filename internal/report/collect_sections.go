package report

import (
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// The report's sections beside the chat calls' figures: the non-streamed
// embed and rerank calls (collect_retrieval.go) and the chat calls' TTFT by the
// pictures in their prompts (collect_images.go). Their collectors are fed live
// beside the chat collector; the binding hands their groups to the frozen
// run, so that the text, the HTML and the run record all carry them from
// the same groups.

// SetSections gives the run its embed and rerank groups and its groups of
// TTFT by images.
func (r *Run) SetSections(retrieval []*RetrievalGroup, images []*ImageGroup) {
	r.Retrieval, r.Images = retrieval, images
}

// SetCapacity gives the run (and each client's view of it) the search's answer.
func (r *Run) SetCapacity(c *runrecord.Capacity) {
	r.Capacity = c
	for _, v := range r.parts {
		v.Capacity = c
	}
}
