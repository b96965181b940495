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
	i := jsonscan.WS(s, 1)
	if s[i] == '}' {
		return f.usage(), true
	}
	for {
		key, j, ok := jsonscan.Key(s, i)
		if !ok {
			return Usage{}, false
		}
		end, ok := jsonscan.Value(s, j, 2, scanMaxDepth)
		if !ok {
			return Usage{}, false
		}
		f.member(key, s[j:end], scanMember)
		var done bool
		if i, done, ok = jsonscan.Next(s, end, '}'); !ok {
			return Usage{}, false
		}
		if done {
			return f.usage(), true
		}
	}
}

// scanMember is the raw value of obj's first member key ("" when it has
// none), or gjson's reading of it where a key has an escape.
func scanMember(obj, key string) string {
	i := jsonscan.WS(obj, 1)
	if obj[i] == '}' {
		return ""
	}
	for {
		k, j, ok := jsonscan.Key(obj, i)
		if !ok {
			return gjsonMember(obj, key)
		}
		end, ok := jsonscan.Value(obj, j, 3, scanMaxDepth)
		if !ok {
			return gjsonMember(obj, key)
		}
		if k == key {
			return obj[j:end]
		}
		var done bool
		if i, done, ok = jsonscan.Next(obj, end, '}'); !ok || done {
			return ""
		}
	}
}
