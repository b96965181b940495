package protocol

import "github.com/llmstream/xk6-llmstream/internal/jsonscan"

// scanOpenAIUsage is openAIUsage of s, a usage object the chunk's scan has
// validated, read with jsonscan: gjson's walk of the object cost about as
// much as the rest of the chunk's reading, on the event every answer ends
// with. False for a key with an escape, which the gjson reading then takes
// (it unescapes keys); FuzzScanUsageAgreesWithGjson holds the two to the
// same figures.
func scanOpenAIUsage(s string) (Usage, bool) {
	var f usageFields
	if !eachMember(s, 2, func(key, raw string) bool {
		f.member(key, raw, scanMember)
		return true
	}) {
		return Usage{}, false
	}
	return f.usage(), true
}

// scanMember is the raw value of obj's first member key ("" when it has
// none), or gjson's reading of it where a key has an escape.
func scanMember(obj, key string) string {
	var v string
	if !eachMember(obj, 3, func(k, raw string) bool {
		if k == key {
			v = raw
			return false
		}
		return true
	}) {
		return gjsonMember(obj, key)
	}
	return v
}

// eachMember hands each member of obj, a validated object whose members are
// at nesting level depth, to each (its key and raw value) in order, until
// each returns false; false when a key has an escape (or obj is not valid).
func eachMember(obj string, depth int, each func(key, raw string) bool) bool {
	i := jsonscan.WS(obj, 1)
	if obj[i] == '}' {
		return true
	}
	for {
		key, j, ok := jsonscan.Key(obj, i)
		if !ok {
			return false
		}
		end, ok := jsonscan.Value(obj, j, depth, scanMaxDepth)
		if !ok {
			return false
		}
		if !each(key, obj[j:end]) {
			return true
		}
		var done bool
		if i, done, ok = jsonscan.Next(obj, end, '}'); !ok || done {
			return ok
		}
	}
}
