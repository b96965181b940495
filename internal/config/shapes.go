package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/dataset"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Option types that a script writes in another shape than their Go type:
// the decoder asks customDecoder before its generic rules.

// decodeFunc reads v into rv; its errors name fields relative to the option.
type decodeFunc func(rv reflect.Value, v any, f field) error

func customDecoder(t reflect.Type) decodeFunc {
	switch t {
	case reflect.TypeFor[stream.Timeouts]():
		return decodeTimeouts
	case reflect.TypeFor[*protocol.Spec]():
		return decodeProtocol
	case reflect.TypeFor[ErrorTypes]():
		return decodeErrorTypes
	case reflect.TypeFor[map[string]string]():
		return decodeTextMap
	case reflect.TypeFor[dataset.Range]():
		return decodeRange
	case reflect.TypeFor[ServerMetricsList]():
		return decodeServerMetrics
	}
	return nil
}

// timeouts is stream.Timeouts as scripts write it.
type timeouts struct {
	Connect    time.Duration `opt:"connect"`
	FirstToken time.Duration `opt:"firstToken"`
	Idle       time.Duration `opt:"idle"`
	Total      time.Duration `opt:"total"`
}

// check: connect, firstToken and idle of 0 turn that limit off (the total
// still bounds the call; negative durations are refused by the decoder);
// the total is what bounds every call, so it must be above 0.
func (t *timeouts) check() error {
	if t.Total <= 0 {
		return fieldErr("total", "must be greater than 0 (it bounds every call)")
	}
	return nil
}

// decodeTimeouts merges the given timeouts over the ones rv holds; on an
// error rv is left as it was.
func decodeTimeouts(rv reflect.Value, v any, f field) error {
	t := (*timeouts)(rv.Addr().Interface().(*stream.Timeouts)) //nolint:forcetypeassert // customDecoder matched the type
	merged := *t
	if err := decodeValue(reflect.ValueOf(&merged).Elem(), v, "", f); err != nil {
		return err
	}
	*t = merged
	return nil
}

// decodeProtocol looks a protocol up by name; "" keeps the default.
func decodeProtocol(rv reflect.Value, v any, f field) error {
	name, ok := v.(string)
	if !ok {
		return wrongType("", v, f.want, "a protocol name")
	}
	if name == "" {
		return nil
	}
	if err := oneOf(name, protocol.Names()); err != nil {
		return err
	}
	spec, err := protocol.Lookup(name)
	if err != nil {
		return &fieldError{problem: err.Error()}
	}
	rv.Set(reflect.ValueOf(spec))
	return nil
}

// ErrorTypes is a set of error classes, written as a list: ['http_429', 'http_5xx'].
type ErrorTypes map[stream.ErrorType]bool

func decodeErrorTypes(rv reflect.Value, v any, f field) error {
	list, ok := v.([]any)
	if !ok {
		return wrongType("", v, f.want, "a list of error types like ['http_429', 'http_5xx']")
	}
	known := make([]string, len(stream.AllErrorTypes))
	for i, t := range stream.AllErrorTypes {
		known[i] = string(t)
	}
	set := ErrorTypes{}
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			return wrongType(fmt.Sprintf("[%d]", i), e, "", "an error type name")
		}
		if err := oneOf(s, known); err != nil {
			return under(fmt.Sprintf("[%d]", i), err)
		}
		set[stream.ErrorType(s)] = true
	}
	rv.Set(reflect.ValueOf(set))
	return nil
}

// decodeTextMap reads headers and tags: strings, with numbers and booleans
// taken as their text (tags: {turn: 2}).
func decodeTextMap(rv reflect.Value, v any, f field) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType("", v, f.want, "an object of strings")
	}
	out := make(map[string]string, len(m))
	for _, k := range sortedKeys(m) {
		switch x := m[k].(type) {
		case nil:
		case string:
			out[k] = x
		case int64, float64, bool:
			out[k] = fmt.Sprint(x)
		default:
			return wrongType(k, x, "", "a string")
		}
	}
	rv.Set(reflect.ValueOf(out))
	return nil
}

// tokenRange is dataset.Range written as an object.
type tokenRange struct {
	Min int `opt:"min"`
	Max int `opt:"max"`
}

const rangeShapes = "a number, [min, max] or {min, max}"

// decodeRange reads a token range written as 7, [10, 50] or {min: 10, max: 50}.
func decodeRange(rv reflect.Value, v any, f field) error {
	var r tokenRange
	switch x := v.(type) {
	case map[string]any:
		if err := decodeValue(reflect.ValueOf(&r).Elem(), x, "", f); err != nil {
			return err
		}
	case []any:
		if len(x) != 2 {
			return &fieldError{problem: fmt.Sprintf("must be %s: a list of two numbers, got %d", rangeShapes, len(x))}
		}
		for i, p := range []*int{&r.Min, &r.Max} {
			if err := decodeValue(reflect.ValueOf(p).Elem(), x[i], fmt.Sprintf("[%d]", i), field{}); err != nil {
				return err
			}
		}
	default:
		n, ok := wholeNumber(v)
		if !ok || n != int64(int(n)) {
			return wrongType("", v, f.want, rangeShapes)
		}
		r.Min, r.Max = int(n), int(n)
	}
	rv.Set(reflect.ValueOf(dataset.Range(r)))
	return nil
}

// oneOf checks a name against a closed list.
func oneOf(s string, known []string) error {
	if slices.Contains(known, s) {
		return nil
	}
	msg := fmt.Sprintf("must be one of %s, got %q", strings.Join(known, ", "), s)
	if near := nearest(s, known); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return &fieldError{problem: msg}
}
