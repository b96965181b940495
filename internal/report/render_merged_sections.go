package report

import (
	"bytes"
	"fmt"
	"html"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// A merged record's sections, rendered as a single run's are: the dispatch
// account among the notes above the tables, the embed and rerank, images
// and conversations tables after the chat figures. The images' and
// conversations' records carry their sketches, so they become groups again
// and share the single run's tables.

// recordReuse words a trace's predicted prefix reuse without the servers'
// cached tokens, which a record does not keep.
func recordReuse(predicted float64) string {
	return fmt.Sprintf("prefix reuse: the trace predicts %.1f%%", 100*predicted)
}

// recordDispatchText is the dispatch account's lines, the notes above the
// tables as in a single run's text.
func recordDispatchText(rec *runrecord.Record) string {
	out := ""
	for _, l := range dispatchLinesOf(rec.Dispatch, recordReuse) {
		out += "  " + l + "\n"
	}
	if out != "" {
		out += "\n"
	}
	return out
}

// recordSectionsText is the sections' text, after the chat figures.
func recordSectionsText(rec *runrecord.Record) string {
	out := ""
	for _, s := range []string{PrecisionText(rec.Precision), retrievalRecordText(rec.Retrieval), ImageText(imageGroups(rec.Images)), ConversationText(conversationGroups(rec.Conversations))} {
		if s != "" {
			out += "\n" + s
		}
	}
	return out
}

// writeRecordSectionsHTML writes the dispatch account and the sections.
func writeRecordSectionsHTML(b *bytes.Buffer, rec *runrecord.Record) {
	if lines := dispatchLinesOf(rec.Dispatch, recordReuse); len(lines) > 0 {
		b.WriteString(`<h2>Dispatch</h2><p class="sub">`)
		for i, l := range lines {
			if i > 0 {
				b.WriteString("<br>")
			}
			b.WriteString(html.EscapeString(l))
		}
		b.WriteString("</p>\n")
	}
	writePrecisionHTML(b, rec.Precision)
	writeRetrievalHTML(b, rec.Retrieval)
	writeImagesHTML(b, imageGroups(rec.Images))
	turns, jobs, stages, note := conversationGroups(rec.Conversations)
	writeConversationsHTML(b, turns, jobs, stages, note)
}

func imageGroups(recs []runrecord.ImageRecord) []*ImageGroup {
	out := make([]*ImageGroup, 0, len(recs))
	for _, g := range recs {
		out = append(out, &ImageGroup{Images: g.Images, Size: g.Size, Calls: g.Calls, Bytes: g.Bytes, TTFT: sketchOf(g.TTFT)})
	}
	return out
}
