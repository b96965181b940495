package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type sampleInner struct {
	N int           `opt:"n"`
	D time.Duration `opt:"d"`
}

type sample struct {
	Name   string                 `opt:"name"`
	Count  int                    `opt:"count,positive"`
	Seed   uint64                 `opt:"seed"`
	Ratio  float64                `opt:"ratio"`
	On     bool                   `opt:"on"`
	Wait   time.Duration          `opt:"wait"`
	Inner  sampleInner            `opt:"inner"`
	Ptr    *sampleInner           `opt:"ptr"`
	List   []sampleInner          `opt:"list"`
	Nums   []int                  `opt:"nums"`
	Mix    map[string]float64     `opt:"mix"`
	ByName map[string]sampleInner `opt:"byName"`
	Weight *float64               `opt:"weight"`
	Raw    any                    `opt:"raw"`
	Key    string                 `opt:"key" true:"X-Default" want:"true or a header name"`
	Tags   map[string]string      `opt:"tags"`
	hidden int                    //nolint:unused // no tag: never set from a script
}

// checkedSample validates across fields and starts from defaults when given.
type checkedSample struct {
	Min int `opt:"min"`
	Max int `opt:"max"`
}

func (c *checkedSample) setDefaults() { c.Max = 10 }

func (c *checkedSample) check() error {
	if c.Min > c.Max {
		return fieldErr("min", "must not exceed max (%d), got %d", c.Max, c.Min)
	}
	return nil
}

type outer struct {
	Range checkedSample `opt:"range"`
}

func ptr[T any](v T) *T { return &v }

func TestDecodeValues(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   map[string]any
		want sample
	}{
		{"empty keeps defaults", map[string]any{}, sample{Name: "default", Count: 1}},
		{"null and undefined mean unset", map[string]any{"name": nil, "count": nil, "inner": nil, "ptr": nil},
			sample{Name: "default", Count: 1, Inner: sampleInner{N: 9}}},
		{"scalars", map[string]any{"name": "x", "count": int64(3), "seed": int64(7), "ratio": 0.5, "on": true},
			sample{Name: "x", Count: 3, Seed: 7, Ratio: 0.5, On: true}},
		{"a whole float is an integer", map[string]any{"count": 4.0, "seed": float64(1 << 40)},
			sample{Name: "default", Count: 4, Seed: 1 << 40}},
		{"an integer is a float", map[string]any{"ratio": int64(2)}, sample{Name: "default", Count: 1, Ratio: 2}},
		{"duration string", map[string]any{"wait": "1m30s"}, sample{Name: "default", Count: 1, Wait: 90 * time.Second}},
		{"duration milliseconds", map[string]any{"wait": int64(250)},
			sample{Name: "default", Count: 1, Wait: 250 * time.Millisecond}},
		{"fractional milliseconds", map[string]any{"wait": 1.5},
			sample{Name: "default", Count: 1, Wait: 1500 * time.Microsecond}},
		{"nested object merges", map[string]any{"inner": map[string]any{"d": "2s"}},
			sample{Name: "default", Count: 1, Inner: sampleInner{N: 9, D: 2 * time.Second}}},
		{"pointer to object", map[string]any{"ptr": map[string]any{"n": int64(1)}},
			sample{Name: "default", Count: 1, Ptr: &sampleInner{N: 1}}},
		{"pointer to number says given", map[string]any{"weight": int64(0)},
			sample{Name: "default", Count: 1, Weight: ptr(0.0)}},
		{"list of objects", map[string]any{"list": []any{map[string]any{"n": int64(1)}, nil, map[string]any{"d": int64(5)}}},
			sample{Name: "default", Count: 1, List: []sampleInner{{N: 1}, {}, {D: 5 * time.Millisecond}}}},
		{"list of numbers", map[string]any{"nums": []any{int64(1), 2.0}}, sample{Name: "default", Count: 1, Nums: []int{1, 2}}},
		{"map of numbers, null entries dropped", map[string]any{"mix": map[string]any{"a": int64(3), "b": 0.5, "c": nil}},
			sample{Name: "default", Count: 1, Mix: map[string]float64{"a": 3, "b": 0.5}}},
		{"map of objects", map[string]any{"byName": map[string]any{"x": map[string]any{"n": int64(2)}}},
			sample{Name: "default", Count: 1, ByName: map[string]sampleInner{"x": {N: 2}}}},
		{"any keeps the value", map[string]any{"raw": map[string]any{"k": "v"}},
			sample{Name: "default", Count: 1, Raw: map[string]any{"k": "v"}}},
		{"true for a string option", map[string]any{"key": true}, sample{Name: "default", Count: 1, Key: "X-Default"}},
		{"false for a string option", map[string]any{"key": false}, sample{Name: "default", Count: 1}},
		{"text map takes numbers and booleans as text", map[string]any{"tags": map[string]any{"turn": int64(2), "b": true, "f": 1.5}},
			sample{Name: "default", Count: 1, Tags: map[string]string{"turn": "2", "b": "true", "f": "1.5"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := sample{Name: "default", Count: 1}
			if _, ok := tc.in["inner"]; ok {
				got.Inner.N = 9
			}
			require.NoError(t, Decode("test options", tc.in, &got))
			require.Equal(t, tc.want, got)
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	known := "known: name, count, seed, ratio, on, wait, inner, ptr, list, nums, mix, byName, weight, raw, key, tags"
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"not an object", "x", `test options must be an object, got "x"`},
		{"unknown key", map[string]any{"nmae": "x"},
			`test options: unknown option "nmae" (did you mean "name"?); ` + known},
		{"case differs", map[string]any{"Name": "x"},
			`test options: unknown option "Name" (did you mean "name"?); ` + known},
		{"unknown key, nothing near", map[string]any{"zzzzzzz": 1},
			`test options: unknown option "zzzzzzz"; ` + known},
		{"two unknown keys", map[string]any{"wiat": 1, "bogus": 2},
			`test options: unknown options "bogus", "wiat" (did you mean "wait"?); ` + known},
		{"nested unknown key", map[string]any{"inner": map[string]any{"dd": "1s"}},
			`test options: unknown option "inner.dd" (did you mean "d"?); known: n, d`},
		{"unknown key in a list element", map[string]any{"list": []any{map[string]any{}, map[string]any{"m": 1}}},
			`test options: unknown option "list[1].m" (did you mean "n"?); known: n, d`},
		{"unknown key in a map entry", map[string]any{"byName": map[string]any{"x": map[string]any{"N": 1}}},
			`test options: unknown option "byName.x.N" (did you mean "n"?); known: n, d`},
		{"string expected", map[string]any{"name": int64(3)}, `test options: name must be a string, got 3`},
		{"bool expected", map[string]any{"on": "yes"}, `test options: on must be true or false, got "yes"`},
		{"whole number expected", map[string]any{"nums": []any{1.5}}, `test options: nums[0] must be a whole number, got 1.5`},
		{"positive expected", map[string]any{"count": int64(0)}, `test options: count must be a positive whole number, got 0`},
		{"negative unsigned", map[string]any{"seed": int64(-1)}, `test options: seed must be a whole number, not negative, got -1`},
		{"number expected", map[string]any{"ratio": "0.5"}, `test options: ratio must be a number, got "0.5"`},
		{"object expected", map[string]any{"inner": []any{}}, `test options: inner must be an object, got a list`},
		{"list expected", map[string]any{"list": map[string]any{}}, `test options: list must be a list, got an object`},
		{"nested type", map[string]any{"mix": map[string]any{"a": "lots"}}, `test options: mix.a must be a number, got "lots"`},
		{"duration bad string", map[string]any{"inner": map[string]any{"d": "soon"}},
			`test options: inner.d must be a duration like '3s' or a number of milliseconds (e.g. '250ms', '1m30s'), got "soon"`},
		{"duration negative", map[string]any{"wait": int64(-5)},
			`test options: wait must be a duration like '3s' or a number of milliseconds (not negative), got -5`},
		{"duration wrong type", map[string]any{"wait": true},
			`test options: wait must be a duration like '3s' or a number of milliseconds, got true`},
		{"want tag", map[string]any{"key": int64(1)}, `test options: key must be true or a header name, got 1`},
		{"function", map[string]any{"name": func() {}}, `test options: name must be a string, got a function`},
		{"text map value", map[string]any{"tags": map[string]any{"a": []any{}}}, `test options: tags.a must be a string, got a list`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got sample
			require.EqualError(t, Decode("test options", tc.in, &got), tc.want)
		})
	}
}

func TestDecodeNullObjectIsUnset(t *testing.T) {
	t.Parallel()
	got := sample{Name: "kept"}
	require.NoError(t, Decode("test options", nil, &got))
	require.Equal(t, sample{Name: "kept"}, got)
}

func TestDecodeDefaultsAndChecks(t *testing.T) {
	t.Parallel()
	var o outer
	require.NoError(t, Decode("o", map[string]any{"range": map[string]any{"min": int64(3)}}, &o))
	require.Equal(t, checkedSample{Min: 3, Max: 10}, o.Range, "setDefaults runs when the object is given")

	o = outer{}
	require.NoError(t, Decode("o", map[string]any{}, &o))
	require.Equal(t, checkedSample{}, o.Range, "and not when it is absent")

	err := Decode("o", map[string]any{"range": map[string]any{"min": int64(11)}}, &o)
	require.EqualError(t, err, "o: range.min must not exceed max (10), got 11")
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "range.min", e.Path)

	err = Decode("o", map[string]any{"range": map[string]any{"mni": int64(1), "zz": int64(2)}}, &o)
	require.ErrorAs(t, err, &e)
	require.Equal(t, "range.mni", e.Path, "an unknown name's path is the first unknown name")
}

func TestNearest(t *testing.T) {
	t.Parallel()
	known := []string{"baseURL", "timeouts", "tokenizer", "tags", "name"}
	for in, want := range map[string]string{
		"timout": "timeouts", "baseUrl": "baseURL", "tokeniser": "tokenizer", "tag": "tags",
		"nmae": "name", "bogus": "", "x": "",
	} {
		require.Equal(t, want, nearest(in, known), in)
	}
}

// positives are options for which 0 means nothing: given, they must be above 0.
type positives struct {
	Limit time.Duration `opt:"limit,positive"`
	Rate  float64       `opt:"rate,positive"`
	Share float64       `opt:"share,positive" want:"a share in (0, 1]"`
}

func TestDecodePositiveRefusesAGivenZero(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   map[string]any
		want string
	}{
		{"duration 0", map[string]any{"limit": int64(0)}, `test options: limit must be a duration above 0 like '3s', got 0`},
		{"duration '0s'", map[string]any{"limit": "0s"}, `test options: limit must be a duration above 0 like '3s', got "0s"`},
		{"number 0", map[string]any{"rate": 0.0}, `test options: rate must be a number above 0, got 0`},
		{"number below 0", map[string]any{"rate": -0.5}, `test options: rate must be a number above 0, got -0.5`},
		{"want tag", map[string]any{"share": int64(0)}, `test options: share must be a share in (0, 1], got 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var got positives
			require.EqualError(t, Decode("test options", tc.in, &got), tc.want)
		})
	}
	var got positives
	require.NoError(t, Decode("test options", map[string]any{}, &got), "absent is not given")
	require.Equal(t, positives{}, got)
	require.NoError(t, Decode("test options", map[string]any{"limit": "2s", "rate": 0.1, "share": nil}, &got))
	require.Equal(t, positives{Limit: 2 * time.Second, Rate: 0.1}, got)
}
