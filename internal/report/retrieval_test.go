package report

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/embed"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func retrievalCall(op, cat string, ok bool, start time.Time, d time.Duration, items int, tokens int64) *Observation {
	r := &embed.Result{Op: op, OK: ok, Items: items, Duration: d, TTFB: d / 2, Parse: time.Millisecond,
		InputTokens: tokens, TokenSource: stream.TokensFromUsage, RequestBytes: 100, Start: start, End: start.Add(d)}
	o := &Observation{Result: *r.StreamResult(), Category: cat, Active: 4, Retrieval: r}
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
		return &Observation{Result: stream.Result{OK: true, TTFT: ttft}, Images: images, ImagePixels: pixels, ImageBytes: int64(images) * 2048}
	}
	c.Add(call(0, 0, 100*time.Millisecond))
	require.Nil(t, c.Groups(), "no prompt had images")
	c.Add(call(1, 512*512, 300*time.Millisecond))
	c.Add(call(2, 2*1920*1080, 900*time.Millisecond))
	c.Add(call(7, 7*64*64, 400*time.Millisecond))
	c.Add(&Observation{Result: stream.Result{OK: false, TTFT: stream.Absent}, Images: 1})
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
