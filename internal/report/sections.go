package report

import (
	"bytes"
	"fmt"
	"html"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/report/sketch"
)

// The report's sections beside the chat calls' figures: the non-streamed
// embed and rerank calls (retrieval.go) and the chat calls' TTFT by the
// pictures in their prompts (images.go). Their collectors are fed live
// beside the chat collector; the binding hands their groups to the frozen
// run, so that the text, the HTML and the run record all carry them from
// the same groups.

// SetSections gives the run its embed and rerank groups and its groups of
// TTFT by images.
func (r *Run) SetSections(retrieval []*RetrievalGroup, images []*ImageGroup) {
	r.Retrieval, r.Images = retrieval, images
}

func retrievalRecords(groups []*RetrievalGroup) []runrecord.RetrievalRecord {
	out := make([]runrecord.RetrievalRecord, 0, len(groups))
	for _, g := range groups {
		rr := runrecord.RetrievalRecord{Op: g.Op, Category: g.Category, Load: g.Level, ByRate: g.ByRate, Calls: g.Calls,
			Failed: g.Failed, InputTokens: g.InputTokens, RequestBytes: g.RequestBytes, Metrics: map[string]*runrecord.MetricRecord{}}
		if len(g.errors) > 0 {
			rr.Errors = g.errors
		}
		for name, s := range map[string]*sketch.Sketch{"duration": g.Duration, "ttfb": g.TTFB, "parse": g.Parse,
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

func imageRecords(groups []*ImageGroup) []runrecord.ImageRecord {
	out := make([]runrecord.ImageRecord, 0, len(groups))
	for _, g := range groups {
		out = append(out, runrecord.ImageRecord{Images: g.Images, Size: g.Size, Calls: g.Calls, Bytes: g.Bytes, TTFT: metricRecord(g.TTFT)})
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
func writeRetrievalHTML(b *bytes.Buffer, groups []runrecord.RetrievalRecord) {
	if len(groups) == 0 {
		return
	}
	b.WriteString(`<h2>Embeddings and rerank</h2><p class="sub">Non-streamed calls: no TTFT or gaps. ` +
		`Timings are the answered calls'; late p99 and dur from due count from the schedule's due time.</p>`)
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

// SetCapacity gives the run (and each client's view of it) the search's answer.
func (r *Run) SetCapacity(c *runrecord.Capacity) {
	r.Capacity = c
	for _, v := range r.parts {
		v.Capacity = c
	}
}
