package report

// The report's sections beside the chat calls' figures: the non-streamed
// embed and rerank calls (retrieval.go) and the chat calls' TTFT by the
// pictures in their prompts (images.go). Their collectors are fed live
// beside the chat collector; the binding hands their groups to the frozen
// run, so that the text, the HTML and the run record all carry them from
// the same groups.

import (
	"bytes"
	"fmt"
	"html"
)

// SetSections gives the run its embed and rerank groups and its groups of
// TTFT by images.
func (r *Run) SetSections(retrieval []*RetrievalGroup, images []*ImageGroup) {
	r.Retrieval, r.Images = retrieval, images
}

// RetrievalRecord is one embed or rerank group in the run record.
type RetrievalRecord struct {
	Op       string            `json:"op"`
	Category string            `json:"category"`
	Load     float64           `json:"load"`              // mean VUs, or iterations/s when by_rate
	ByRate   bool              `json:"by_rate,omitempty"` // the load is an arrival rate
	Calls    uint64            `json:"calls"`
	Failed   uint64            `json:"failed"`
	Errors   map[string]uint64 `json:"errors,omitempty"`
	// Metrics are duration, ttfb, parse (answered calls) and, for calls a
	// schedule asked for, dispatch_delay and e2e_from_due, in ms.
	Metrics map[string]*MetricRecord `json:"metrics"`
	// BatchMean is the answered calls' mean batch (inputs or documents).
	BatchMean *float64 `json:"batch_mean,omitempty"`
	// InputTokens are the answered calls' counted input tokens;
	// InputTokensPerSec is them over the group's span (nil when uncounted).
	InputTokens       int64    `json:"input_tokens"`
	InputTokensPerSec *float64 `json:"input_tokens_per_sec,omitempty"`
	RequestBytes      int64    `json:"request_bytes"`
}

// ImageRecord is one group of TTFT by images in the run record.
type ImageRecord struct {
	Images int           `json:"images"`         // 5 stands for five or more; 0 for prompts without
	Size   string        `json:"size,omitempty"` // the class of the prompt's total pixels
	Calls  uint64        `json:"calls"`
	Bytes  int64         `json:"image_bytes"` // the pictures' encoded bytes, summed
	TTFT   *MetricRecord `json:"ttft"`
}

func retrievalRecords(groups []*RetrievalGroup) []RetrievalRecord {
	out := make([]RetrievalRecord, 0, len(groups))
	for _, g := range groups {
		rr := RetrievalRecord{Op: g.Op, Category: g.Category, Load: g.Level, ByRate: g.ByRate, Calls: g.Calls,
			Failed: g.Failed, InputTokens: g.InputTokens, RequestBytes: g.RequestBytes, Metrics: map[string]*MetricRecord{}}
		if len(g.errors) > 0 {
			rr.Errors = g.errors
		}
		for name, s := range map[string]*Sketch{"duration": g.Duration, "ttfb": g.TTFB, "parse": g.Parse,
			"dispatch_delay": g.DispatchDelay, "e2e_from_due": g.E2EFromDue} {
			if s.Count() > 0 {
				rr.Metrics[name] = metricRecord(s)
			}
		}
		if ok := g.Calls - g.Failed; ok > 0 {
			m := float64(g.Items) / float64(ok)
			rr.BatchMean = &m
		}
		if v := g.InputTokensPerSec(); v > 0 {
			rr.InputTokensPerSec = &v
		}
		out = append(out, rr)
	}
	return out
}

func imageRecords(groups []*ImageGroup) []ImageRecord {
	out := make([]ImageRecord, 0, len(groups))
	for _, g := range groups {
		out = append(out, ImageRecord{Images: g.Images, Size: g.Size, Calls: g.Calls, Bytes: g.Bytes, TTFT: metricRecord(g.TTFT)})
	}
	return out
}

// sectionsText is the sections' text, after the chat figures.
func sectionsText(r *Run) string {
	out := ""
	for _, s := range []string{CapacityText(r.Capacity), RetrievalText(r.Retrieval), ImageText(r.Images), ConversationText(r.Turns, r.Jobs, r.JobStages(), "")} {
		if s != "" {
			out += "\n" + s
		}
	}
	return out
}

// writeSectionsHTML writes the sections as tables with the text's columns.
func writeSectionsHTML(b *bytes.Buffer, r *Run) {
	writeCapacityHTML(b, r.Capacity)
	writeRetrievalHTML(b, retrievalRecords(r.Retrieval))
	writeImagesHTML(b, r.Images)
	writeConversationsHTML(b, r.Turns, r.Jobs, r.JobStages(), "")
}

// writeRetrievalHTML writes the embed and rerank groups' table (a single
// run's or a merged record's).
func writeRetrievalHTML(b *bytes.Buffer, groups []RetrievalRecord) {
	if len(groups) == 0 {
		return
	}
	b.WriteString(`<h2>Embeddings and rerank</h2><p class="sub">Non-streamed calls: no TTFT or gaps. ` +
		`Timings are the answered calls'; late p99 and dur from due count from the schedule's due time.</p>`)
	rows := make([][]string, len(groups))
	for i := range groups {
		rows[i] = groups[i].cells()
	}
	writeTableHTML(b, "retrieval", retrievalColumns, rows)
}

// writeImagesHTML writes the table of TTFT by images.
func writeImagesHTML(b *bytes.Buffer, groups []*ImageGroup) {
	if len(groups) == 0 {
		return
	}
	b.WriteString(`<h2>TTFT by images in the prompt</h2><p class="sub">Answered chat calls; image tokens cost prefill.</p>`)
	rows := make([][]string, len(groups))
	for i, g := range groups {
		rows[i] = g.cells()
	}
	writeTableHTML(b, "images", imageColumns, rows)
}

func writeTableHTML(b *bytes.Buffer, id string, head []string, rows [][]string) {
	fmt.Fprintf(b, `<table id="%s"><tr>`, id)
	for _, h := range head {
		fmt.Fprintf(b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr>\n")
	for _, row := range rows {
		b.WriteString("<tr>")
		for _, c := range row {
			fmt.Fprintf(b, "<td>%s</td>", html.EscapeString(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n")
}
