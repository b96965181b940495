package compare

import (
	"maps"
	"math"
	"slices"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// A prefix cache survives between runs: run the same prompts twice and the
// second run's prefills are served from what the first one left, TTFT far
// lower and throughput higher with nothing about the service changed. Such
// a comparison is confounded, and the report says so instead of letting a
// warm rerun read as an improvement (or a cold one as a regression).

// CacheMargin is how far apart two runs' cache hit rates may lie before
// their comparison is confounded: 10 percentage points. Below it the
// share of prefills the cache saved differs too little to move a
// percentile beyond the 5 % a verdict needs, unless hits are many times
// faster than misses; above it a warm rerun's TTFT is visibly another
// distribution.
const CacheMargin = 0.10

// cacheMinCalls is the fewest calls of known cache state on each side
// whose hit rates are set side by side: fewer put a 10-point difference
// within chance.
const cacheMinCalls = 30

// Confounding says whether the runs saw different prefix-cache states:
// the client's hit rate (calls the server said it served partly from its
// cache) of the whole run, or of each client when both runs had several,
// or a server's own prefix-cache hit ratio (after the warm-ups when both
// runs had one), further apart than CacheMargin. Nil when nothing differs (or
// nothing was known).
func Confounding(cur, base *runrecord.Record) *runrecord.Confounding {
	var by []runrecord.CacheState
	if len(cur.Clients) > 0 && len(base.Clients) > 0 {
		for _, name := range slices.Sorted(maps.Keys(cur.Clients)) {
			if bc := base.Clients[name]; bc != nil {
				by = appendClientCache(by, name, cur.Clients[name].Categories, bc.Categories)
			}
		}
	} else {
		by = appendClientCache(by, "", cur.Categories, base.Categories)
	}
	for _, v := range cur.Server {
		b := baselineView(v, cur.Server, base.Server)
		if b == nil {
			continue
		}
		was, now := b.Run, v.Run
		if b.Measured != nil && v.Measured != nil { // both after their warm-ups, as Servers compares them
			was, now = b.Measured, v.Measured
		}
		if was == nil || now == nil || was.PrefixHitRatio == nil || now.PrefixHitRatio == nil {
			continue
		}
		if math.Abs(*now.PrefixHitRatio-*was.PrefixHitRatio) > CacheMargin {
			by = append(by, runrecord.CacheState{Source: "server", Of: v.Endpoint, Baseline: *was.PrefixHitRatio, Current: *now.PrefixHitRatio})
		}
	}
	if len(by) == 0 {
		return nil
	}
	return &runrecord.Confounding{Margin: CacheMargin, By: by}
}

// appendClientCache adds the whole run's (or a client's) hit rates when
// they lie apart.
func appendClientCache(by []runrecord.CacheState, client string, cur, base map[string]*runrecord.CategoryRecord) []runrecord.CacheState {
	c, b := cur[runrecord.AllCategories], base[runrecord.AllCategories]
	if c == nil || b == nil || c.CacheHits+c.CacheMisses < cacheMinCalls || b.CacheHits+b.CacheMisses < cacheMinCalls {
		return by
	}
	now := float64(c.CacheHits) / float64(c.CacheHits+c.CacheMisses)
	was := float64(b.CacheHits) / float64(b.CacheHits+b.CacheMisses)
	if math.Abs(now-was) <= CacheMargin {
		return by
	}
	return append(by, runrecord.CacheState{Source: "client", Of: client, Baseline: was, Current: now})
}
