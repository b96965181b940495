package protocol

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter reads how long a server asked the client to wait: the
// non-standard retry-after-ms (OpenAI, Azure) first, as it is the more precise,
// then Retry-After in seconds or as an HTTP date.
func ParseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
			return time.Duration(f * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
		return time.Duration(f * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// ParseServerTiming reads a Server-Timing header or trailer
// (`queue;dur=1.2, prefill;dur=3.4;desc="x"`) into durations in ms by name.
// Metrics without a dur parameter are skipped; malformed parts are ignored.
func ParseServerTiming(v string) map[string]float64 {
	var out map[string]float64
	for _, metric := range strings.Split(v, ",") {
		parts := strings.Split(metric, ";")
		name := strings.TrimSpace(parts[0])
		if name == "" {
			continue
		}
		for _, p := range parts[1:] {
			k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(k), "dur") {
				continue
			}
			f, err := strconv.ParseFloat(strings.Trim(strings.TrimSpace(val), `"`), 64)
			if err != nil {
				continue
			}
			if out == nil {
				out = map[string]float64{}
			}
			out[name] = f
		}
	}
	return out
}
