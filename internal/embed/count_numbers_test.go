package embed

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/tidwall/gjson"
)

// An unkept vector is sized without parsing its numbers; its size and its
// refusals must be those of the vector parsed number by number.
func TestAnUnkeptVectorIsSizedAsAParsedOne(t *testing.T) {
	for _, raw := range []string{
		`[]`, `[ ]`, "[\n]", `[0]`, `[-1.5e-3, 2E+7 ,0.25]`, "[\n  1,\n  -0,\n  3.5\n]",
		`[1, "2"]`, `["a"]`, `[1, [2]]`, `[{"a": 1}]`, `[true]`, `[null, 1]`, `[1, 2, null]`,
	} {
		v := gjson.Parse(raw)
		is := assert.New(t)
		dimKept, vals, errKept := floatVector(v, true)
		dim, none, err := floatVector(v, false)
		is.Equal(errKept, err, raw)
		is.Nil(none, raw)
		if errKept == nil {
			is.Equal(dimKept, dim, raw)
			is.Len(vals, dim, raw)
		}
	}
}

// The same over any valid JSON array: sizing by its bytes must agree with
// parsing it, whatever the array holds.
func FuzzUnkeptVectorSizedAsParsed(f *testing.F) {
	for _, s := range []string{`[]`, `[ 1 , -2.5e3 ]`, `[1,"a,b"]`, `[[1,2]]`, `[1,{"t":null}]`, `[false]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !gjson.Valid(raw) {
			return
		}
		v := gjson.Parse(raw)
		if !v.IsArray() {
			return
		}
		dimKept, _, errKept := floatVector(v, true)
		dim, _, err := floatVector(v, false)
		if (err == nil) != (errKept == nil) || (err == nil && dim != dimKept) {
			t.Fatalf("%q: sized %d (%v), parsed %d (%v)", raw, dim, err, dimKept, errKept)
		}
	})
}
