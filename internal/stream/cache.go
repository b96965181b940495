package stream

import "github.com/llmstream/xk6-llmstream/internal/protocol"

// CacheState says whether a call's prompt hit the server's prefix cache, as far
// as the server's usage report tells.
type CacheState uint8

// The cache states. Servers that report no usage leave it unknown.
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
	case u == nil || u.PromptTokens == 0 && u.CachedTokens == 0:
		return CacheUnknown
	case u.CachedTokens > 0:
		return CacheHit
	default:
		return CacheMiss
	}
}
