package report

import (
	"bytes"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// sectionsText is the sections' text, after the chat figures.
func sectionsText(r *Run) string {
	out := ""
	for _, s := range []string{CapacityText(r.Capacity), PrecisionText(r.Precision), RetrievalText(r.Retrieval), ImageText(r.Images), ConversationText(r.Turns, r.Jobs, r.JobStages(), "")} {
		if s != "" {
			out += "\n" + s
		}
	}
	return out
}

// writeSectionsHTML writes the sections as tables with the text's columns.
func writeSectionsHTML(b *bytes.Buffer, r *Run) {
	writeCapacityHTML(b, r.Capacity)
	writePrecisionHTML(b, r.Precision)
	writeRetrievalHTML(b, retrievalRecords(r.Retrieval))
	writeImagesHTML(b, r.Images)
	writeConversationsHTML(b, r.Turns, r.Jobs, r.JobStages(), "")
}

// writeRetrievalHTML writes the embed and rerank groups' table (a single
// run's or a merged record's).
func writeRetrievalHTML(b *bytes.Buffer, groups []runrecord.RetrievalRecord) {
	if len(groups) == 0 {
		return
	}
	b.WriteString(`<h2>Embeddings and rerank</h2><p class="sub">Non-streamed calls: no TTFT or gaps. ` +
		`Durations are the answered calls' (TTFB and parse count failed calls too, not those the test's stop cancelled in flight); late p99 and dur from due count from the schedule's due time.</p>`)
	rows := make([][]string, len(groups))
	for i := range groups {
		rows[i] = retrievalCells(&groups[i])
	}
	writeTableHTML(b, "retrieval", retrievalColumns, rows)
}

// writeImagesHTML writes the table of TTFT by images.
func writeImagesHTML(b *bytes.Buffer, groups []*ImageGroup) {
	if len(groups) == 0 {
		return
	}
	b.WriteString(`<h2>TTFT by images in the prompt</h2><p class="sub">Chat calls with a TTFT; image tokens cost prefill.</p>`)
	rows := make([][]string, len(groups))
	for i, g := range groups {
		rows[i] = g.cells()
	}
	writeTableHTML(b, "images", imageColumns, rows)
}
