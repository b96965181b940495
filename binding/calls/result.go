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

// callResult is a record's JS result (sobek.DynamicObject). What the
// script read, set or deleted is a short list, searched in order: a script
// reads a key or two, and a map for them was two allocations of every call.
type callResult struct {
	rt   *sobek.Runtime
	rec  *record.Call
	seen []resultKey // keys read so far, the script's own, and deleted ones
	// first holds seen's first keys: a script that reads one or two adds
	// no allocation of its own.
	first [2]resultKey
}

// resultKey is one key the script touched: its value (read or set), or
// gone when the script deleted it.
type resultKey struct {
	key  string
	val  sobek.Value
	gone bool
}

// jsResult is rec's result as a JS object; on the event loop.
func jsResult(rt *sobek.Runtime, rec *record.Call) *sobek.Object {
	r := &callResult{rt: rt, rec: rec}
	r.seen = r.first[:0]
	return rt.NewDynamicObject(r)
}

// find is the key's entry, nil when the script has not touched it.
func (r *callResult) find(key string) *resultKey {
	for i := range r.seen {
		if r.seen[i].key == key {
			return &r.seen[i]
		}
	}
	return nil
}

func (r *callResult) Get(key string) sobek.Value {
	if k := r.find(key); k != nil {
		if k.gone {
			return nil
		}
		return k.val
	}
	v, ok := r.rec.JSValue(key)
	if !ok {
		return nil
	}
	jv := r.rt.ToValue(v)
	r.seen = append(r.seen, resultKey{key: key, val: jv})
	return jv
}

func (r *callResult) Set(key string, val sobek.Value) bool {
	if k := r.find(key); k != nil {
		k.val, k.gone = val, false
		return true
	}
	r.seen = append(r.seen, resultKey{key: key, val: val})
	return true
}

func (r *callResult) Has(key string) bool {
	if k := r.find(key); k != nil {
		return !k.gone
	}
	return r.rec.HasJSKey(key)
}

func (r *callResult) Delete(key string) bool {
	if k := r.find(key); k != nil {
		k.val, k.gone = nil, true
		return true
	}
	if r.rec.HasJSKey(key) {
		r.seen = append(r.seen, resultKey{key: key, gone: true})
	}
	return true
}

// Keys are the record's keys (in its table's order) the script did not
// delete, then the ones it added (sorted: a map has no order to keep).
func (r *callResult) Keys() []string {
	keys := make([]string, 0, len(r.rec.JSKeys())+len(r.seen))
	for _, k := range r.rec.JSKeys() {
		if e := r.find(k); e == nil || !e.gone {
			keys = append(keys, k)
		}
	}
	n := len(keys)
	for _, e := range r.seen {
		if !e.gone && !r.rec.HasJSKey(e.key) {
			keys = append(keys, e.key)
		}
	}
	slices.Sort(keys[n:])
	return keys
}

// Plain is the result as the Go map a plain object exports to: the
// record's values, with the script's changes.
func (r *callResult) Plain() map[string]any {
	m := r.rec.JS()
	for _, e := range r.seen {
		if e.gone {
			delete(m, e.key)
		} else {
			m[e.key] = e.val.Export()
		}
	}
	return m
}
