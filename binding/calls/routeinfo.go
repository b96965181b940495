package calls

import (
	"strconv"
	"sync/atomic"

	"go.k6.io/k6/metrics"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/sample"
)

// What a route's samples, result and report observation say about it: the
// call's tags (k6's, the client's, the call's, the dataset item's) and the
// client settings that shape its fan-out.

// Route names, in the route tag and the report.
const (
	routePrimary  = "primary"
	routeFallback = "fallback"
)

// routeInfo is what a route's samples, result and observation say about it,
// and the client settings that shape them.
type routeInfo struct {
	// Origin is the route's identity, as the call's record will carry it:
	// Name is the name tag and servedBy, Route routePrimary or
	// routeFallback.
	record.Origin
	tags       metrics.TagsAndMeta
	tagGet     tagGetter       // the client's Get of tags.Tags when it planned (tag_memo.go)
	tagMemo    *tagMemo        // the client's last attempt tag set (tag_memo.go); nil builds each
	tagRoute   bool            // the route tag is set (clients with a fallback, and the fallback)
	gapSampler *sample.Sampler // with gapSamples 'sampled'
	slo        config.SLO
	eventLag   atomic.Int64 // longest wait of an event for its JS callback, ns
	// systemTags is k6's systemTags option: the tags k6 defines (status,
	// proto, name) are set only when it names them. nil (no k6 options, as
	// in unit tests) keeps them all.
	systemTags *metrics.SystemTagSet
}

// applyItem tags a call with its dataset item's category and turn (unless the
// call's own tags set them) and remembers whether it has a shared prefix.
func applyItem(tags *metrics.TagsAndMeta, item map[string]any, info *routeInfo) {
	if item == nil {
		return
	}
	if cat, ok := item["category"].(string); ok && cat != "" {
		if _, set := tags.Tags.Get("category"); !set {
			tags.SetTag("category", cat)
		}
	}
	if turn, ok := item["turn"].(int64); ok && turn > 0 {
		if _, set := tags.Tags.Get("turn"); !set {
			tags.SetTag("turn", strconv.FormatInt(turn, 10))
		}
	}
	info.SharedPrefix, _ = item["sharedPrefix"].(bool)
	info.ItemID, _ = item["id"].(string)
	imgs, _ := item["images"].([]any)
	for _, v := range imgs {
		m, _ := v.(map[string]any)
		b, _ := m["bytes"].(int64)
		w, _ := m["width"].(int64)
		h, _ := m["height"].(int64)
		info.Images++
		info.ImageBytes += b
		info.ImagePixels += w * h
	}
}
