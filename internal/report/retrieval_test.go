package report

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/embed"
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func retrievalCall(op, cat string, ok bool, start time.Time, d time.Duration, items int, tokens int64) *Observation {
	r := &embed.Result{Op: op, OK: ok, Items: items, Duration: measure.Of(d), TTFB: measure.Of(d / 2), Parse: measure.Of(time.Millisecond),
		InputTokens: tokens, TokenSource: stream.TokensFromUsage, RequestBytes: 100, Start: start, End: start.Add(d)}
	o := &Observation{Result: r.StreamResult(), Origin: record.Origin{Category: cat}, Active: 4, Retrieval: r}
	if !ok {
		o.Err = &stream.Error{Type: stream.ErrHTTP5xx, Message: "HTTP 503"}
		o.OK = false
	}
	return o
}

// TestRetrievalSectionGroupsByOpAndCategory: the section counts every call,
// times the answered ones only, and leaves chat calls to the chat groups.
func TestRetrievalSectionGroupsByOpAndCategory(t *testing.T) {
	c := NewRetrievalCollector(Options{})
	t0 := time.Unix(1000, 0)
	for i := range 10 {
		c.Add(retrievalCall(embed.OpEmbed, "batch_32", true, t0.Add(time.Duration(i)*100*time.Millisecond), 50*time.Millisecond, 32, 8192))
	}
	c.Add(retrievalCall(embed.OpEmbed, "batch_32", false, t0, 0, 32, 0))
	c.Add(retrievalCall(embed.OpRerank, "docs_8", true, t0, 20*time.Millisecond, 8, 1000))
	c.Add(&Observation{}) // a chat call: not this section's
	groups := c.Groups()
	require.Len(t, groups, 2)
	g := groups[0]
	require.Equal(t, embed.OpEmbed, g.Op)
	require.EqualValues(t, 11, g.Calls)
	require.EqualValues(t, 1, g.Failed)
	require.EqualValues(t, 10, g.Duration.Count())
	require.EqualValues(t, 320, g.Items)
	// 10 × 8192 tokens over 0.95 s (first start to last end).
	require.InDelta(t, 81920/0.95, g.InputTokensPerSec(), 1)
	require.Equal(t, "http_5xx×1", g.ErrorTypes())
	text := RetrievalText(groups)
	require.Contains(t, text, "no TTFT or gaps")
	require.Contains(t, text, "batch_32")
	require.Contains(t, text, "docs_8")
	require.Equal(t, "", RetrievalText(nil))
}

// TestImageSectionSplitsTTFTByCountAndSize: answered chat calls by their
// pictures, next to those without; nothing when no prompt had images.
func TestImageSectionSplitsTTFTByCountAndSize(t *testing.T) {
	c := NewImageCollector(Options{})
	call := func(images int, pixels int64, ttft time.Duration) *Observation {
		return &Observation{Result: &stream.Result{OK: true, TTFT: measure.Of(ttft)}, Origin: record.Origin{Images: images, ImagePixels: pixels, ImageBytes: int64(images) * 2048}}
	}
	c.Add(call(0, 0, 100*time.Millisecond))
	require.Nil(t, c.Groups(), "no prompt had images")
	c.Add(call(1, 512*512, 300*time.Millisecond))
	c.Add(call(2, 2*1920*1080, 900*time.Millisecond))
	c.Add(call(7, 7*64*64, 400*time.Millisecond))
	c.Add(&Observation{Result: &stream.Result{OK: false}, Origin: record.Origin{Images: 1}})
	groups := c.Groups()
	require.Len(t, groups, 4)
	require.Equal(t, 0, groups[0].Images)
	require.Equal(t, "≤0.3 MP", groups[1].Size)
	require.Equal(t, 2, groups[2].Images)
	require.Equal(t, ">4 MP", groups[2].Size)
	require.Equal(t, 5, groups[3].Images, "five or more")
	text := ImageText(groups)
	require.Contains(t, text, "5+")
	require.Contains(t, text, "none")
}

// TestSectionsReachEveryFormatAndTheFinding: embed calls a schedule sent
// late carry their dispatch delay and duration from the due time into the
// section, feed the generator_behind rule like chat calls would, and the
// embed and image sections are in the text, the HTML and the run record.
func TestSectionsReachEveryFormatAndTheFinding(t *testing.T) {
	rc := NewRetrievalCollector(Options{})
	for i := range 30 {
		start := t0.Add(time.Duration(i) * 100 * time.Millisecond)
		o := retrievalCall(embed.OpEmbed, "", true, start, 50*time.Millisecond, 4, 64)
		o.Due = start.Add(-200 * time.Millisecond)
		rc.Add(o)
	}
	ic := NewImageCollector(Options{})
	ic.Add(&Observation{Result: &stream.Result{OK: true, TTFT: measure.Of(300 * time.Millisecond)}, Origin: record.Origin{Images: 2, ImagePixels: 2 << 20, ImageBytes: 4096}})
	ic.Add(&Observation{Result: &stream.Result{OK: true, TTFT: measure.Of(100 * time.Millisecond)}})

	run := runOf(call(t0, "", 100)) // one chat call, no due time
	run.SetSections(rc.Groups(), ic.Groups())
	g := run.Retrieval[0]
	require.InEpsilon(t, 200, g.DispatchDelay.Quantile(0.5), 0.02)
	require.InEpsilon(t, 250, g.E2EFromDue.Quantile(0.5), 0.02, "the whole answer from the due time")
	text, htmlDoc, raw, err := Render(run, nil, RenderOptions{})
	require.NoError(t, err)
	require.Contains(t, text, "Embeddings and rerank")
	require.Contains(t, text, "TTFT by images in the prompt")
	require.Contains(t, text, "generator_behind", "late embeds are late sends: the rule sees them")
	require.Contains(t, string(htmlDoc), `<table id="retrieval">`)
	require.Contains(t, string(htmlDoc), `<table id="images">`)
	var rec struct {
		Retrieval []struct {
			Op      string `json:"op"`
			Calls   uint64 `json:"calls"`
			Metrics map[string]struct {
				P50 float64 `json:"p50"`
			} `json:"metrics"`
		} `json:"retrieval"`
		Images []struct {
			Images int `json:"images"`
			TTFT   struct {
				P50 float64 `json:"p50"`
			} `json:"ttft"`
		} `json:"images"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	require.Len(t, rec.Retrieval, 1)
	require.EqualValues(t, 30, rec.Retrieval[0].Calls)
	require.InEpsilon(t, 200, rec.Retrieval[0].Metrics["dispatch_delay"].P50, 0.02)
	require.InEpsilon(t, 250, rec.Retrieval[0].Metrics["e2e_from_due"].P50, 0.02)
	require.Len(t, rec.Images, 2)
	require.InEpsilon(t, 300, rec.Images[1].TTFT.P50, 0.02)
	_, err = runrecord.ParseRecord("run.json", raw)
	require.NoError(t, err, "a record with the sections still loads as a baseline")

	// Closed-model embeds: no due time, none invented.
	closed := NewRetrievalCollector(Options{})
	closed.Add(retrievalCall(embed.OpEmbed, "", true, t0, 50*time.Millisecond, 1, 8))
	require.Zero(t, closed.Groups()[0].DispatchDelay.Count())
	// The text leaves out the due-time columns no group has.
	require.NotContains(t, RetrievalText(closed.Groups()), "late p99")
}
