package stream

import "github.com/llmstream/xk6-llmstream/internal/protocol"

// CacheState says whether a call's prompt hit the server's prefix cache, as far
// as the server's usage report tells.
type CacheState uint8

// The cache states. A server that reports no usage, or usage without any
// cached-token field, leaves it unknown: only a count it sent is a reading,
// and a miss is its saying 0.
const (
	CacheUnknown CacheState = iota
	CacheHit
	CacheMiss
)

// String is the state's name in tags, results and reports.
func (s CacheState) String() string {
	switch s {
	case CacheHit:
		return "hit"
	case CacheMiss:
		return "miss"
	default:
		return "unknown"
	}
}

func cacheState(u *protocol.Usage) CacheState {
	switch {
	case u == nil || !u.CachedReported:
		return CacheUnknown
	case u.CachedTokens > 0:
		return CacheHit
	default:
		return CacheMiss
	}
}
