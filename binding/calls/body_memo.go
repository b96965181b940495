package calls

// A client's last chat body and what the plan made of it. Most load tests
// send the same body call after call; exporting it from JavaScript,
// setting its streaming flags and encoding it was a tenth of a short
// call's CPU and most of what its plan allocated. A body is compared with
// the last one as JavaScript holds it, without exporting it, and when it
// is the same (the same JSON string, or an object whose values are all the
// same) the last payload is sent again. The body may be changed between
// calls (a message pushed, a field set): the comparison reads every value,
// so a change is a new plan. Anything but plain JSON values (a Date, a
// typed array, a cycle) is never reused. The event loop owns it (chat(),
// embed(), rerank() and a conversation's turns plan there). An embed or
// rerank body is kept the same way, with the request it was read into and
// that request in the client's wire format (retrievalWire).

import (
	"reflect"
	"strconv"

	"github.com/grafana/sobek"
)

// bodyPlan is what a call's plan makes of its body: the bytes sent and
// what the protocol read from it.
type bodyPlan struct {
	payload    []byte // never changed once made: calls in flight share it
	model      string // the body's model, "" for the client's
	promptOnly bool
	maxTokens  int64
}

// bodyMemo is the last body, as exported before the plan changed it (a
// JSON string, or a copy of the object's values), and its plan P: a chat
// call's bodyPlan, an embed or rerank call's retrievalOp.
type bodyMemo[P any] struct {
	raw  any
	plan P
	set  bool
}

// maxBodyDepth bounds the comparison and the copy: a deeper body (or a
// cycle) is planned afresh each call.
const maxBodyDepth = 32

// reuse is the last plan when v is the last body.
func (m *bodyMemo[P]) reuse(v sobek.Value) (P, bool) {
	var none P
	if !m.set || v == nil {
		return none, false
	}
	if s, ok := m.raw.(string); ok {
		if sobek.IsString(v) && v.String() == s {
			return m.plan, true
		}
		return none, false
	}
	o, ok := v.(*sobek.Object)
	if !ok || !sameJSON(o, m.raw, 0) {
		return none, false
	}
	return m.plan, true
}

// keep remembers raw (a JSON string, or copyJSON's copy of the exported
// body before its plan changed it) and its plan.
func (m *bodyMemo[P]) keep(raw any, p P) {
	m.raw, m.plan, m.set = raw, p, true
}

//nolint:gochecknoglobals // the types sobek exports numbers as
var (
	int64Type   = reflect.TypeFor[int64]()
	float64Type = reflect.TypeFor[float64]()
	boolType    = reflect.TypeFor[bool]()
	mapType     = reflect.TypeFor[map[string]any]()
)

// sameJSON says whether v exports to g (a value copyJSON made).
func sameJSON(v sobek.Value, g any, depth int) bool {
	if depth > maxBodyDepth {
		return false
	}
	switch g := g.(type) {
	case nil:
		return v == nil || sobek.IsNull(v) || sobek.IsUndefined(v)
	case string:
		return sobek.IsString(v) && v.String() == g
	case bool:
		_, obj := v.(*sobek.Object)
		return v != nil && !obj && v.ExportType() == boolType && v.ToBoolean() == g
	case int64:
		return sobek.IsNumber(v) && v.ExportType() == int64Type && v.ToInteger() == g
	case float64:
		return sobek.IsNumber(v) && v.ExportType() == float64Type && v.ToFloat() == g
	case []any:
		o, ok := v.(*sobek.Object)
		if !ok || o.ClassName() != "Array" || o.Get("length").ToInteger() != int64(len(g)) {
			return false
		}
		for i, e := range g {
			if !sameJSON(o.Get(strconv.Itoa(i)), e, depth+1) {
				return false
			}
		}
		return true
	case map[string]any:
		o, ok := v.(*sobek.Object)
		if !ok || o.ClassName() != "Object" || o.ExportType() != mapType {
			return false
		}
		keys := o.Keys()
		if len(keys) != len(g) {
			return false
		}
		for _, k := range keys {
			e, ok := g[k]
			if !ok || !sameJSON(o.Get(k), e, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// copyJSON copies an exported body's objects and arrays (strings are
// shared: they do not change); false for anything but JSON values.
func copyJSON(v any, depth int) (any, bool) {
	if depth > maxBodyDepth {
		return nil, false
	}
	switch v := v.(type) {
	case nil, string, bool, int64, float64:
		return v, true
	case []any:
		c := make([]any, len(v))
		for i, e := range v {
			var ok bool
			if c[i], ok = copyJSON(e, depth+1); !ok {
				return nil, false
			}
		}
		return c, true
	case map[string]any:
		c := make(map[string]any, len(v))
		for k, e := range v {
			ce, ok := copyJSON(e, depth+1)
			if !ok {
				return nil, false
			}
			c[k] = ce
		}
		return c, true
	}
	return nil, false
}
