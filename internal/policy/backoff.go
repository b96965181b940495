package policy

import (
	"crypto/rand"
	"math"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Backoff is the wait before attempt n+1: the server's Retry-After when it
// gave one (and the policy respects it), else exponential backoff with jitter.
func Backoff(pol config.Retry, n int, res *stream.Result) time.Duration {
	if d, ok := res.RetryAfter.Get(); pol.RespectRetryAfter && ok {
		return d
	}
	b := pol.Backoff
	d := time.Duration(float64(b.Base) * math.Pow(2, float64(n-1)))
	if b.Max > 0 && d > b.Max {
		d = b.Max
	}
	if b.Jitter > 0 {
		d += time.Duration((randFloat()*2 - 1) * b.Jitter * float64(d))
	}
	return max(d, 0)
}

// randFloat is uniform in [0, 1). crypto/rand, because VUs retrying together
// must not share a generator's lock or its sequence.
func randFloat() float64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return float64(uint64(b[0])|uint64(b[1])<<8|uint64(b[2])<<16|uint64(b[3])<<24|uint64(b[4]&0x1f)<<32) /
		float64(uint64(1)<<37)
}
