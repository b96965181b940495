package runrecord

// Tallies are a group's exact counters beyond the headline counts of a
// CategoryRecord: what the diagnosis reads besides the distributions. The
// record keeps them so that a merged record is diagnosed like a run: every
// rule that reads a group's figures reads the same ones from a record.
type Tallies struct {
	CacheUnknown uint64 `json:"cache_unknown,omitempty"`
	// SharedPrefix counts the calls whose prompt shares a prefix with an
	// earlier one, and how many of those hit or missed the cache.
	SharedPrefix uint64 `json:"shared_prefix,omitempty"`
	SharedHit    uint64 `json:"shared_hit,omitempty"`
	SharedMiss   uint64 `json:"shared_miss,omitempty"`
	// StalledRequests counts the calls with at least one stall.
	StalledRequests uint64 `json:"stalled_requests,omitempty"`
	// Gap statistics kept exactly, whatever the gap sketch's resolution: the
	// longest real gap, how many gaps there were, how many were part of a burst
	// (under a millisecond) and how many bursts (runs of such gaps) they formed.
	LongestGapMS float64 `json:"longest_gap_ms,omitempty"`
	GapCount     uint64  `json:"gap_count,omitempty"`
	BurstGaps    uint64  `json:"burst_gaps,omitempty"`
	Bursts       uint64  `json:"bursts,omitempty"`
	// StarvedRequests counts the calls whose idle timer fired far too late.
	StarvedRequests uint64 `json:"starved_requests,omitempty"`
	// TTFTJudged counts the OK calls whose TTFT could be judged
	// (stream.TTFTCheck); LateFirstReads those whose first token was read
	// together with the next (dated by it, a decode step late), LateSends
	// those whose request went out half a decode step or more after t0.
	TTFTJudged     uint64 `json:"ttft_judged,omitempty"`
	LateFirstReads uint64 `json:"late_first_reads,omitempty"`
	LateSends      uint64 `json:"late_sends,omitempty"`
	PromptTokens   int64  `json:"prompt_tokens,omitempty"`
	CachedTokens   int64  `json:"cached_tokens,omitempty"`
	// Sums over OK calls where both parse time and E2E were measured: the client's share.
	ParseSumMS    float64 `json:"parse_sum_ms,omitempty"`
	ParseE2ESumMS float64 `json:"parse_e2e_sum_ms,omitempty"`
	// Sums over OK calls with a TTFT: how much of it was connection set-up.
	ConnectSumMS     float64 `json:"connect_sum_ms,omitempty"`
	ConnectTTFTSumMS float64 `json:"connect_ttft_sum_ms,omitempty"`
	NewConns         uint64  `json:"new_conns,omitempty"`
	ReusedConns      uint64  `json:"reused_conns,omitempty"`
	// Reach counts the calls' requests by whether they reached the server.
	Reach ServerReach `json:"server_reach,omitzero"`
}

// Add counts o's calls in t as well.
func (t *Tallies) Add(o Tallies) {
	t.CacheUnknown += o.CacheUnknown
	t.SharedPrefix += o.SharedPrefix
	t.SharedHit += o.SharedHit
	t.SharedMiss += o.SharedMiss
	t.StalledRequests += o.StalledRequests
	t.LongestGapMS = max(t.LongestGapMS, o.LongestGapMS)
	t.GapCount += o.GapCount
	t.BurstGaps += o.BurstGaps
	t.Bursts += o.Bursts
	t.StarvedRequests += o.StarvedRequests
	t.TTFTJudged += o.TTFTJudged
	t.LateFirstReads += o.LateFirstReads
	t.LateSends += o.LateSends
	t.PromptTokens += o.PromptTokens
	t.CachedTokens += o.CachedTokens
	t.ParseSumMS += o.ParseSumMS
	t.ParseE2ESumMS += o.ParseE2ESumMS
	t.ConnectSumMS += o.ConnectSumMS
	t.ConnectTTFTSumMS += o.ConnectTTFTSumMS
	t.NewConns += o.NewConns
	t.ReusedConns += o.ReusedConns
	t.Reach.Add(o.Reach)
}
