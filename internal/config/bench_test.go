package config

import "testing"

// BenchmarkParseCall is the decoder's cost on every chat() call: typical
// params (tags, per-call timeouts, gaps) over a client's defaults.
func BenchmarkParseCall(b *testing.B) {
	c, err := ParseClient(map[string]any{"baseURL": "http://h"})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		params := map[string]any{"tags": map[string]any{"category": "short", "turn": int64(2)},
			"timeouts": map[string]any{"firstToken": "10s", "total": int64(60000)}, "gaps": true}
		if _, err := ParseCall(params, c); err != nil {
			b.Fatal(err)
		}
	}
}
