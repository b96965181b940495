package main

import (
	"regexp"

	"github.com/google/pprof/profile"
)

// trendSinkAdd is where k6 keeps every Trend sample for its end-of-test
// summary and thresholds (metrics.TrendSink: a []float64 that only grows).
// The module cannot change that sink, so the soak measures it apart from
// everything else. Either k6 major: the soak measures a v2 build
// (go.k6.io/k6/v2/metrics) as it does the module's own v1 build.
var trendSinkAdd = regexp.MustCompile(`^go\.k6\.io/k6(/v[0-9]+)?/metrics\.\(\*TrendSink\)\.Add$`)

// heapSplit is k6's live heap (inuse_space after a forced collection), in
// bytes: all of it, and the part allocated under trendSinkAdd.
type heapSplit struct {
	total, trend int64
}

// other is everything but the Trend sample store: the module, k6, goja…
func (h heapSplit) other() int64 { return h.total - h.trend }

// splitHeap sums the profile's inuse_space (value index idx) and the part of
// it whose stack runs through trendSinkAdd; inlined frames count, since Go's
// profiles list them as lines of one location.
func splitHeap(p *profile.Profile, idx int) heapSplit {
	var h heapSplit
	for _, s := range p.Sample {
		v := s.Value[idx]
		h.total += v
		if inStack(s, trendSinkAdd) {
			h.trend += v
		}
	}
	return h
}

func inStack(s *profile.Sample, function *regexp.Regexp) bool {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil && function.MatchString(l.Function.Name) {
				return true
			}
		}
	}
	return false
}
