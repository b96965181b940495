package jsonscan

import (
	"testing"

	"github.com/tidwall/gjson"

	"github.com/llmstream/xk6-llmstream/internal/jsondepth"
)

// valid says whether s is one JSON document, by Value.
func valid(s string) bool {
	end, ok := Value(s, WS(s, 0), 0, jsondepth.Limit)
	return ok && WS(s, end) == len(s)
}

var documents = []struct { //nolint:gochecknoglobals // test table
	s    string
	want bool
}{
	{`{"a":[1,-0,0.5,1e9,2E-3,-1.5e+2,true,false,null,"x\"\\\/\b\f\n\r\t\u00e9"],"b":{}}`, true},
	{" \t\r\n[ ] ", true},
	{`""`, true},
	{`{"a":1,}`, false},
	{`[1,]`, false},
	{`[01]`, false},
	{`[1.]`, false},
	{`[.5]`, false},
	{`[1e]`, false},
	{`[-]`, false},
	{`[+1]`, false},
	{`["\x"]`, false},
	{`["\u12G4"]`, false},
	{"[\"a\x1fb\"]", false},
	{`[tru]`, false},
	{`[nul]`, false},
	{`{"a" 1}`, false},
	{`{1:2}`, false},
	{`[1] [2]`, false},
	{"\v[]", false},
	{`{"a":[}`, false},
	{``, false},
}

func TestValueValidatesAsJSON(t *testing.T) {
	for _, d := range documents {
		if got := valid(d.s); got != d.want || got != gjson.Valid(d.s) {
			t.Errorf("%q: valid %v, want %v (gjson.Valid %v)", d.s, got, d.want, gjson.Valid(d.s))
		}
	}
}

// FuzzValueAgreesWithGjson: within the nesting the client reads, Value
// accepts exactly the documents gjson's validator accepts.
func FuzzValueAgreesWithGjson(f *testing.F) {
	for _, d := range documents {
		f.Add(d.s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !jsondepth.Within(s, jsondepth.Limit) {
			return
		}
		if got, want := valid(s), gjson.Valid(s); got != want {
			t.Fatalf("%q: valid %v, gjson.Valid %v", s, got, want)
		}
	})
}

func TestSmallInt(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want bool
	}{{"0", 0, true}, {"7,", 7, true}, {"-3", -3, true}, {"123456789", 123456789, true}, {"1234567890", 0, false},
		{"01", 0, false}, {"1.0", 0, false}, {"1e2", 0, false}, {"-", 0, false}, {"x", 0, false}} {
		_, n, ok := SmallInt(c.s, 0)
		if ok != c.want || (ok && n != c.n) {
			t.Errorf("SmallInt(%q) = %d, %v; want %d, %v", c.s, n, ok, c.n, c.want)
		}
	}
}

func TestNumbers(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want bool
	}{
		{"[]", 0, true}, {"[ ]", 0, true}, {"[0]", 1, true}, {"[0,1,-2.5e-3, 1E+9 ,\n-0 ]", 5, true},
		{"[1,]", 0, false}, {"[,1]", 0, false}, {"[01]", 0, false}, {"[1.]", 0, false}, {"[1e]", 0, false},
		{"[-]", 0, false}, {"[1 2]", 0, false}, {"[1", 0, false}, {"[1,", 0, false}, {`[1,"2"]`, 0, false},
		{"[null]", 0, false}, {"[[1]]", 0, false}, {"[+1]", 0, false},
	} {
		end, n, ok := Numbers(c.s, 0)
		if ok != c.want || (ok && (n != c.n || end != len(c.s))) {
			t.Errorf("Numbers(%q) = %d, %d, %v; want %d, %v", c.s, end, n, ok, c.n, c.want)
		}
		if ok && !valid(c.s) {
			t.Errorf("Numbers accepted %q, which is not JSON", c.s)
		}
	}
}

// FuzzNumbersAgreesWithValue: Numbers accepts exactly the arrays Value
// accepts whose elements are all numbers, and counts them.
func FuzzNumbersAgreesWithValue(f *testing.F) {
	for _, s := range []string{"[]", "[0,1,-2.5e-3, 1E+9 ]", "[1,]", `[1,"2"]`, "[01]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) == 0 || s[0] != '[' {
			return
		}
		end, n, ok := Numbers(s, 0)
		wantEnd, wantOK := Value(s, 0, 0, 1)
		count := 0
		if wantOK {
			// Count the elements and check each is a number.
			i := WS(s, 1)
			if s[i] != ']' {
				for {
					e, isNum := Number(s, i)
					if !isNum {
						wantOK = false
						break
					}
					count++
					var done bool
					if i, done, _ = Next(s, e, ']'); done {
						break
					}
				}
			}
		}
		if ok != wantOK || (ok && (end != wantEnd || n != count)) {
			t.Fatalf("%q: Numbers = %d, %d, %v; Value = %d, %v with %d numbers", s, end, n, ok, wantEnd, wantOK, count)
		}
	})
}
