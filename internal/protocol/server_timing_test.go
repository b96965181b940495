package protocol

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzServerTimingAgreesWithSplitting: walking the value in place reads
// what splitting it into metrics and parameters first reads.
func FuzzServerTimingAgreesWithSplitting(f *testing.F) {
	for _, s := range []string{
		`queue;dur=1.5, prefill;desc="p";dur=3, cache;desc=hit, total;dur="7.25", ;dur=1, bad;dur=x`,
		`a;desc="x, y;z";dur=2, b;dur=1;dur=9, a;dur=4`, `a;;dur=1;`, `x;desc="\";dur=5", y;dur=1`, ``, `,;,`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, want := ParseServerTiming(s), splitServerTiming(s)
		if len(got) != len(want) {
			t.Fatalf("%q: %v, want %v", s, got, want)
		}
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Fatalf("%q: %v, want %v", s, got, want)
			}
		}
	})
}

// A response's header and trailer fill one map; the later wins a name.
func TestAddServerTimingFillsOneMap(t *testing.T) {
	m := AddServerTiming(nil, "queue;dur=1, total;dur=2")
	m = AddServerTiming(m, "total;dur=3, decode;dur=4")
	want := map[string]float64{"queue": 1, "total": 3, "decode": 4}
	if len(m) != len(want) || m["queue"] != 1 || m["total"] != 3 || m["decode"] != 4 {
		t.Fatalf("got %v, want %v", m, want)
	}
	if AddServerTiming(nil, "cache;desc=hit") != nil {
		t.Fatal("no duration: no map")
	}
}

// splitServerTiming is the reading by splitting (metrics at ',' and
// parameters at ';', outside quoted strings), the oracle of the fuzz test.
func splitServerTiming(header string) map[string]float64 {
	var out map[string]float64
	for _, metric := range splitQuoted(header, ',') {
		params := splitQuoted(metric, ';')
		name := strings.TrimSpace(params[0])
		if name == "" || strings.ContainsAny(name, " \t\"=") {
			continue
		}
		for _, p := range params[1:] {
			k, v, found := strings.Cut(p, "=")
			if !strings.EqualFold(strings.TrimSpace(k), "dur") {
				continue
			}
			if found {
				v = strings.Trim(strings.TrimSpace(v), `"`)
				if d, err := strconv.ParseFloat(v, 64); err == nil && d >= 0 && !math.IsInf(d, 0) && !math.IsNaN(d) {
					if out == nil {
						out = map[string]float64{}
					}
					out[name] = d
				}
			}
			break
		}
	}
	return out
}

func splitQuoted(s string, sep byte) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// BenchmarkServerTiming reads the Server-Timing trailer llm-sim sends with
// every answer.
func BenchmarkServerTiming(b *testing.B) {
	const v = "queue;dur=0.012, prefill;dur=0.500, decode;dur=2.250, total;dur=2.801"
	b.ReportAllocs()
	for b.Loop() {
		if len(ParseServerTiming(v)) != 4 {
			b.Fatal("not 4 metrics")
		}
	}
}
