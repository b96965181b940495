package calls

// A call's JS result, read from its record as the script reads it: a
// script reads a field or two of some forty, and building them all (each
// value boxed into a map, the attempts' list, the usage object) for every
// call was a share of a short call's CPU and of the garbage the collector
// then runs for. Each value is made once, on its first read, so a nested
// object read twice is one object; what the script sets or deletes is its
// own, as in a plain object.

import (
	"slices"

	"github.com/grafana/sobek"

	"github.com/llmstream/xk6-llmstream/internal/record"
)

// callResult is a record's JS result (sobek.DynamicObject).
type callResult struct {
	rt   *sobek.Runtime
	rec  *record.Call
	read map[string]sobek.Value // values read so far, and the script's own
	gone map[string]bool        // keys the script deleted
}

// jsResult is rec's result as a JS object; on the event loop.
func jsResult(rt *sobek.Runtime, rec *record.Call) *sobek.Object {
	return rt.NewDynamicObject(&callResult{rt: rt, rec: rec})
}

func (r *callResult) Get(key string) sobek.Value {
	if v, ok := r.read[key]; ok {
		return v
	}
	if r.gone[key] {
		return nil
	}
	v, ok := r.rec.JSValue(key)
	if !ok {
		return nil
	}
	jv := r.rt.ToValue(v)
	if r.read == nil {
		r.read = map[string]sobek.Value{}
	}
	r.read[key] = jv
	return jv
}

func (r *callResult) Set(key string, val sobek.Value) bool {
	if r.read == nil {
		r.read = map[string]sobek.Value{}
	}
	r.read[key] = val
	delete(r.gone, key)
	return true
}

func (r *callResult) Has(key string) bool {
	if _, ok := r.read[key]; ok {
		return true
	}
	return !r.gone[key] && r.rec.HasJSKey(key)
}

func (r *callResult) Delete(key string) bool {
	delete(r.read, key)
	if r.rec.HasJSKey(key) {
		if r.gone == nil {
			r.gone = map[string]bool{}
		}
		r.gone[key] = true
	}
	return true
}

// Keys are the record's keys (in its table's order) the script did not
// delete, then the ones it added (sorted: a map has no order to keep).
func (r *callResult) Keys() []string {
	keys := make([]string, 0, len(r.rec.JSKeys())+len(r.read))
	for _, k := range r.rec.JSKeys() {
		if !r.gone[k] {
			keys = append(keys, k)
		}
	}
	n := len(keys)
	for k := range r.read {
		if !r.rec.HasJSKey(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys[n:])
	return keys
}

// Plain is the result as the Go map a plain object exports to: the
// record's values, with the script's changes.
func (r *callResult) Plain() map[string]any {
	m := r.rec.JS()
	for k := range r.gone {
		delete(m, k)
	}
	for k, v := range r.read { // never a deleted key: Delete drops it, Set un-deletes it
		m[k] = v.Export()
	}
	return m
}
