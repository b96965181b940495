package config

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agnivade/levenshtein"
)

// Decode reads an options object, as a JS value exports to in Go
// (map[string]any, []any, string, int64, float64, bool, nil), into the struct
// that into points to. where names the object in messages ("Client options").
//
// Every options object of the module follows one rule:
//   - names are exact, given by `opt:"name"` field tags; an unknown name is an
//     error that lists the known ones and suggests the nearest;
//   - a value of the wrong type is an error that names the option and the
//     type expected;
//   - null and undefined mean "unset": the field keeps the value it had, so
//     callers fill in defaults before decoding;
//   - durations are strings like '3s' or '250ms', or numbers of milliseconds;
//   - integers must be whole numbers; nested objects, maps and lists decode
//     the same way, element by element.
//
// Tag options: `opt:"name,positive"` asks for a value above 0 (a whole
// number, a number or a duration) when the option is given: for an option
// whose 0 means nothing (no window, no share, no interval), a 0 in the script
// is a mistake, and taking it for the default the absent option gets would
// hide it. `want:"…"` says in messages what the option takes when the type
// alone does not; `true:"…"` lets a string option take true for that value and
// false for "". A type with a pointer method setDefaults() starts from those
// values when its object is given; a type with check() error is validated
// once decoded, and a fieldError it returns is placed under its path.
func Decode(where string, v any, into any) error {
	rv := reflect.ValueOf(into)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic(fmt.Sprintf("config.Decode: into must be a non-nil pointer, got %T", into))
	}
	err := decodeValue(rv.Elem(), v, "", field{})
	if err == nil {
		return nil
	}
	e, ok := err.(*fieldError) //nolint:errorlint // made here, never wrapped
	if !ok {
		return fmt.Errorf("%s: %w", where, err)
	}
	out := &Error{Where: where, Path: e.path, Problem: e.message()}
	if e.unknown != nil {
		out.unknown, out.Path = true, join(e.path, e.unknown.names[0])
	}
	return out
}

// Error is a bad option: which object, which option, what is wrong.
type Error struct {
	Where   string // "Client options"
	Path    string // "retry.backoff.jitter" (the first unknown name); "" for the object itself
	Problem string // "must be a number between 0 and 1, got 2"
	unknown bool
}

func (e *Error) Error() string {
	switch {
	case e.unknown:
		return e.Where + ": " + e.Problem
	case e.Path == "":
		return e.Where + " " + e.Problem
	default:
		return e.Where + ": " + e.Path + " " + e.Problem
	}
}

// fieldError is an Error before it knows its object; check methods return
// one with the field's name, and the decoder puts the object's path in front.
type fieldError struct {
	path, problem string
	unknown       *unknownNames // set for unknown names in the object at path
}

type unknownNames struct{ names, known []string }

func (e *fieldError) Error() string {
	if e.unknown != nil {
		return e.message()
	}
	return strings.TrimSpace(e.path + " " + e.problem)
}

func (e *fieldError) message() string {
	if e.unknown == nil {
		return e.problem
	}
	bad := make([]string, len(e.unknown.names))
	for i, k := range e.unknown.names {
		bad[i] = strconv.Quote(join(e.path, k))
		if near := nearest(k, e.unknown.known); near != "" {
			bad[i] += fmt.Sprintf(" (did you mean %q?)", near)
		}
	}
	plural := ""
	if len(bad) > 1 {
		plural = "s"
	}
	return fmt.Sprintf("unknown option%s %s; known: %s", plural, strings.Join(bad, ", "),
		strings.Join(e.unknown.known, ", "))
}

// fieldErr builds the error a check method returns for one of its fields.
func fieldErr(name, format string, args ...any) error {
	return &fieldError{path: name, problem: fmt.Sprintf(format, args...)}
}

// under places an error from a nested decoder or check under path.
func under(path string, err error) error {
	e, ok := err.(*fieldError) //nolint:errorlint // made here, never wrapped
	if !ok {
		return &fieldError{path: path, problem: err.Error()}
	}
	return &fieldError{path: join(path, e.path), problem: e.problem, unknown: e.unknown}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	if name == "" {
		return path
	}
	if strings.HasPrefix(name, "[") {
		return path + name
	}
	return path + "." + name
}

type (
	defaulter interface{ setDefaults() }
	checker   interface{ check() error }
)

// field is what a struct tag says about one option.
type field struct {
	name     string
	index    []int // reflect.Value.FieldByIndex
	positive bool
	want     string // what the option takes, for messages
	ifTrue   string // a string option that also takes true, meaning this value
}

var durationType = reflect.TypeFor[time.Duration]() //nolint:gochecknoglobals // a type constant

func decodeValue(rv reflect.Value, v any, path string, f field) error {
	if v == nil {
		return nil // null and undefined leave the default
	}
	if custom := customDecoder(rv.Type()); custom != nil {
		if err := custom(rv, v, f); err != nil {
			return under(path, err)
		}
		return nil
	}
	if rv.Type() == durationType {
		d, err := ParseDuration(v)
		if err != nil {
			return &fieldError{path: path, problem: err.Error()}
		}
		if f.positive && d <= 0 {
			return wrongType(path, v, f.want, "a duration above 0 like '3s'")
		}
		rv.SetInt(int64(d))
		return nil
	}
	switch rv.Kind() {
	case reflect.Interface:
		if !reflect.TypeOf(v).AssignableTo(rv.Type()) {
			return wrongType(path, v, f.want, "a "+rv.Type().String())
		}
		rv.Set(reflect.ValueOf(v))
	case reflect.Pointer:
		// Decode into a copy of what it points to, so a partial option
		// keeps the rest of the default.
		n := reflect.New(rv.Type().Elem())
		if !rv.IsNil() {
			n.Elem().Set(rv.Elem())
		}
		if err := decodeValue(n.Elem(), v, path, f); err != nil {
			return err
		}
		rv.Set(n)
	case reflect.Slice:
		return decodeList(rv, v, path, f)
	case reflect.Map:
		return decodeMap(rv, v, path, f)
	case reflect.Struct:
		return decodeStruct(rv, v, path, f)
	default:
		return decodeScalar(rv, v, path, f)
	}
	return nil
}

// decodeScalar sets a string, a boolean or a number, refusing a value of
// another type or out of the field's range with what the option takes.
func decodeScalar(rv reflect.Value, v any, path string, f field) error {
	switch rv.Kind() {
	case reflect.String:
		if b, ok := v.(bool); ok && f.ifTrue != "" {
			rv.SetString("")
			if b {
				rv.SetString(f.ifTrue)
			}
			return nil
		}
		s, ok := v.(string)
		if !ok {
			return wrongType(path, v, f.want, "a string")
		}
		rv.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			return wrongType(path, v, f.want, "true or false")
		}
		rv.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decodeInt(rv, v, path, f)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return decodeUint(rv, v, path, f)
	case reflect.Float32, reflect.Float64:
		x, ok := toFloat(v)
		switch {
		case f.positive && (!ok || !(x > 0)):
			return wrongType(path, v, f.want, "a number above 0")
		case !ok || math.IsNaN(x):
			return wrongType(path, v, f.want, "a number")
		}
		rv.SetFloat(x)
	default:
		panic(fmt.Sprintf("config: option %s has a type the decoder does not handle: %s", path, rv.Type()))
	}
	return nil
}

func decodeInt(rv reflect.Value, v any, path string, f field) error {
	n, ok := wholeNumber(v)
	switch {
	case f.positive && (!ok || n <= 0 || rv.OverflowInt(n)):
		return wrongType(path, v, f.want, "a positive whole number")
	case !ok || rv.OverflowInt(n):
		return wrongType(path, v, f.want, "a whole number")
	}
	rv.SetInt(n)
	return nil
}

func decodeUint(rv reflect.Value, v any, path string, f field) error {
	n, ok := wholeNumber(v)
	switch {
	case f.positive && (!ok || n <= 0 || rv.OverflowUint(uint64(n))):
		return wrongType(path, v, f.want, "a positive whole number")
	case !ok || n < 0 || rv.OverflowUint(uint64(n)):
		return wrongType(path, v, f.want, "a whole number, not negative")
	}
	rv.SetUint(uint64(n))
	return nil
}

func decodeList(rv reflect.Value, v any, path string, f field) error {
	list, ok := v.([]any)
	if !ok {
		return wrongType(path, v, f.want, "a list")
	}
	out := reflect.MakeSlice(rv.Type(), len(list), len(list))
	for i, e := range list {
		if err := decodeValue(out.Index(i), e, fmt.Sprintf("%s[%d]", path, i), field{}); err != nil {
			return err
		}
	}
	rv.Set(out)
	return nil
}

func decodeMap(rv reflect.Value, v any, path string, f field) error {
	if rv.Type().Key().Kind() != reflect.String {
		panic(fmt.Sprintf("config: option %s: map keys must be strings, got %s", path, rv.Type()))
	}
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, v, f.want, "an object")
	}
	out := reflect.MakeMapWithSize(rv.Type(), len(m))
	for _, k := range sortedKeys(m) {
		if m[k] == nil {
			continue
		}
		e := reflect.New(rv.Type().Elem()).Elem()
		if err := decodeValue(e, m[k], join(path, k), field{}); err != nil {
			return err
		}
		out.SetMapIndex(reflect.ValueOf(k).Convert(rv.Type().Key()), e)
	}
	rv.Set(out)
	return nil
}

func decodeStruct(rv reflect.Value, v any, path string, f field) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, v, f.want, "an object")
	}
	fields := fieldsOf(rv.Type())
	if err := checkNames(path, m, fields); err != nil {
		return err
	}
	if d, ok := rv.Addr().Interface().(defaulter); ok {
		d.setDefaults()
	}
	for _, fl := range fields {
		if x, ok := m[fl.name]; ok {
			if err := decodeValue(rv.FieldByIndex(fl.index), x, join(path, fl.name), fl); err != nil {
				return err
			}
		}
	}
	if c, ok := rv.Addr().Interface().(checker); ok {
		if err := c.check(); err != nil {
			return under(path, err)
		}
	}
	return nil
}

var fieldCache sync.Map //nolint:gochecknoglobals // reflect.Type → []field, read-mostly

// fieldsOf lists a struct's options in declaration order (the order they are
// listed in messages). An embedded struct without a tag lends its options,
// as in encoding/json.
func fieldsOf(t reflect.Type) []field {
	if c, ok := fieldCache.Load(t); ok {
		return c.([]field) //nolint:forcetypeassert // only this function stores
	}
	var out []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("opt")
		if !ok && sf.Anonymous && sf.Type.Kind() == reflect.Struct {
			for _, f := range fieldsOf(sf.Type) {
				f.index = append([]int{i}, f.index...)
				out = append(out, f)
			}
			continue
		}
		if !ok || tag == "-" {
			continue
		}
		if !sf.IsExported() {
			panic(fmt.Sprintf("config: %s.%s has an opt tag but is not exported", t, sf.Name))
		}
		name, flags, _ := strings.Cut(tag, ",")
		out = append(out, field{name: name, index: []int{i}, positive: flags == "positive",
			want: sf.Tag.Get("want"), ifTrue: sf.Tag.Get("true")})
	}
	fieldCache.Store(t, out)
	return out
}

// checkNames rejects keys that are not exactly an option's name: a misspelt
// option must not be silently ignored.
func checkNames(path string, m map[string]any, fields []field) error {
	known := make([]string, len(fields))
	for i, f := range fields {
		known[i] = f.name
	}
	var bad []string
	for _, k := range sortedKeys(m) {
		if !slices.Contains(known, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return &fieldError{path: path, unknown: &unknownNames{names: bad, known: known}}
}

// nearest is the known name a misspelling most likely meant: the same name
// in another case, or one at most two edits away (one for names of three
// letters or fewer); "" when none is that close.
func nearest(name string, known []string) string {
	limit := 2
	if len(name) <= 3 {
		limit = 1
	}
	best, bestDist := "", limit+1
	for _, k := range known {
		if d := levenshtein.ComputeDistance(strings.ToLower(name), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

func wrongType(path string, v any, want, def string) error {
	if want == "" {
		want = def
	}
	return &fieldError{path: path, problem: fmt.Sprintf("must be %s, got %s", want, describe(v))}
}

// describe shows a JS value in a message as the script wrote it.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case bool, int, int64, float64:
		return fmt.Sprint(x)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	if reflect.TypeOf(v).Kind() == reflect.Func {
		return "a function"
	}
	return fmt.Sprintf("a %T", v)
}

// ParseDuration reads milliseconds (a number) or a duration string ("3s",
// "1m30s", "250ms").
func ParseDuration(v any) (time.Duration, error) {
	const want = "must be a duration like '3s' or a number of milliseconds"
	if f, ok := toFloat(v); ok {
		if f < 0 || math.IsNaN(f) || math.IsInf(f, 0) || f > float64(math.MaxInt64/int64(time.Millisecond)) {
			return 0, fmt.Errorf("%s (not negative), got %v", want, v)
		}
		return time.Duration(f * float64(time.Millisecond)), nil
	}
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("%s, got %s", want, describe(v))
	}
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s (e.g. '250ms', '1m30s'), got %q", want, s)
	}
	return d, nil
}

// wholeNumber reads a JS number that must be an integer.
func wholeNumber(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		if n != math.Trunc(n) || math.Abs(n) >= 1<<63 {
			return 0, false
		}
		return int64(n), true
	}
	return 0, false
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case int64:
		return float64(n), true
	case int:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
