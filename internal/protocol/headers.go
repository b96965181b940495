package protocol

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter bounds a server-given delay so that an absurd header cannot
// overflow a Duration; callers apply their own, smaller, cap.
const maxRetryAfter = 24 * time.Hour

// ParseRetryAfter reads how long a server asked the client to wait: the
// non-standard retry-after-ms (OpenAI, Azure) first, as it is the more precise,
// then Retry-After in seconds (fractions tolerated, as the SDKs do) or as an
// HTTP date measured from now (RFC 9110, section 10.2.3); a past date means 0.
// Negative, NaN and infinite values are unusable; huge ones are capped at a day.
func ParseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if f, ok := delayNumber(v); ok {
			return clampDelay(f * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if f, ok := delayNumber(v); ok {
		return clampDelay(f * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxRetryAfter), true
	}
	return 0, false
}

func delayNumber(v string) (float64, bool) {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func clampDelay(ns float64) time.Duration {
	if ns > float64(maxRetryAfter) {
		return maxRetryAfter
	}
	return time.Duration(ns)
}
