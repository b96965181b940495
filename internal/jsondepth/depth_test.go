package jsondepth

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func nest(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

func TestWithinCountsNestingAtTheLimit(t *testing.T) {
	for _, c := range []struct {
		data  string
		limit int
		want  bool
	}{
		{"", 0, true},
		{`"x"`, 0, true},
		{`[]`, 0, false},
		{`[]`, 1, true},
		{nest(3), 3, true},
		{nest(4), 3, false},
		{`[[],[],[]]`, 2, true},              // siblings do not add up
		{`{"a":{"b":[1,{"c":2}]}}`, 4, true}, // objects and arrays alike
		{`{"a":{"b":[1,{"c":2}]}}`, 3, false},
		{`["[[[[", "{{{{"]`, 1, true},       // brackets in strings do not count
		{`["\"[[[[", "\\", [[]]]`, 3, true}, // nor after an escaped quote; an escaped backslash ends its escape
		{`["\"[[[[", "\\", [[]]]`, 2, false},
		{`]]]]` + nest(3), 3, true}, // a stray closer never lowers the count below zero
		{`]]]]` + nest(4), 3, false},
		{`"[[[[`, 0, true}, // an unclosed string: the rest is its text
		{"[[[[[", 5, true}, // as many bytes as the limit: as deep at most
		{"[[[[[[", 5, false},
		{strings.Repeat("[", 10_000_000), Limit, false},
	} {
		if got := Within(c.data, c.limit); got != c.want {
			t.Errorf("Within(%.40q, %d) = %v, want %v", c.data, c.limit, got, c.want)
		}
		if got := Within([]byte(c.data), c.limit); got != c.want {
			t.Errorf("Within([]byte(%.40q), %d) = %v, want %v", c.data, c.limit, got, c.want)
		}
	}
}

func TestCheckNamesWhatAndTheLimit(t *testing.T) {
	if err := Check(nest(Limit), "the answer"); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	err := Check(nest(Limit+1), "the answer")
	if !errors.Is(err, ErrTooDeep) {
		t.Fatalf("past the limit: %v", err)
	}
	if want := "the answer is nested too deeply (past 512 levels of arrays and objects)"; err.Error() != want {
		t.Fatalf("got %q, want %q", err, want)
	}
}

// FuzzWithinAgreesWithEncodingJSON: on valid JSON, Within's count is the
// document's real depth, which encoding/json measures by decoding it.
func FuzzWithinAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{`[]`, `{"a":[1,"]",{"b":"\\\""}]}`, nest(40), `"[["`, `[[["\u005b"]]]`} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, data string, limit uint8) {
		var v any
		if json.Unmarshal([]byte(data), &v) != nil {
			Within(data, int(limit)) // any bytes: it must return, nothing more
			return
		}
		if got, want := Within(data, int(limit)), depth(v) <= int(limit); got != want {
			t.Fatalf("Within(%q, %d) = %v, the document is %d deep", data, limit, got, depth(v))
		}
	})
}

// depth is the nesting of a decoded document.
func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}
