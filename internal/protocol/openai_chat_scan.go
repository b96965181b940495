package protocol

import (
	"github.com/tidwall/gjson"

	"github.com/llmstream/xk6-llmstream/internal/jsonscan"
)

// A single-pass reading of the ordinary chat.completion.chunk, the event a
// streamed answer is made of (one per token). The general decoder
// (decodeOpenAIChunk) trims the payload, checks its nesting, validates it
// with gjson, then walks the object, its choices and each delta, each walk
// re-scanning the values it skips: five passes over every token's bytes.
// scanChatChunk validates and reads the chunk in one pass, and hands
// anything outside the shape it knows (an error, tool calls, a choices that
// is not an array, a key with escapes, deep nesting) back to the general
// decoder, which stays the reference: the fuzz target
// FuzzChatChunkScanAgreesWithDecoder holds the two to the same Delta and the
// same error on any input.

// scanMaxDepth bounds the nesting the scan follows; a deeper payload is
// the general decoder's (which checks the nesting first).
const scanMaxDepth = 32

// chatChunk is what the scan found in a chunk, applied to the Delta only
// once the whole payload proved valid.
type chatChunk struct {
	model          string
	hasModel       bool
	choices        choicesRead // the last "choices" value, read as it was met
	usage, timings string      // the last "usage" and "timings" values, raw
}

// scanChatChunk decodes data into d as decodeOpenAIChunk with
// decodeChatChoice would; false, with d untouched, when the chunk is not
// one it reads (the caller then decodes it the general way).
func scanChatChunk(data string, d *Delta) bool {
	// The choices are read apart from the Delta, as the scan meets them: a
	// choice the scan does not read (tool calls) sends the whole chunk back.
	var c chatChunk
	if !c.scan(data) {
		return false
	}
	ch := &c.choices
	if c.hasModel {
		d.Model = c.model
	}
	ch.apply(d)
	if len(c.usage) > 0 && c.usage[0] == '{' {
		u, ok := scanOpenAIUsage(c.usage)
		if !ok {
			u = openAIUsage(gjson.Parse(c.usage))
		}
		d.keepUsage(u)
		d.UsageCumulative = ch.n > 0
	}
	if len(c.timings) > 0 && c.timings[0] == '{' {
		d.ServerTimings = llamaCppTimings(gjson.Parse(c.timings))
	}
	return true
}

// scan reads the chunk's top level: one object and nothing after it.
func (c *chatChunk) scan(s string) bool {
	i := jsonscan.WS(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = jsonscan.WS(s, i+1)
	if i < len(s) && s[i] == '}' {
		return jsonscan.WS(s, i+1) == len(s)
	}
	for {
		key, j, ok := jsonscan.Key(s, i)
		if !ok {
			return false
		}
		start := j
		switch key {
		case "error": // an error chunk is the general decoder's
			if !jsonscan.Literal(s, j, "null") {
				return false
			}
			j += len("null")
		case "choices": // validated as it is read, in this one pass
			c.choices = choicesRead{}
			if j, ok = c.choices.read(s, j); !ok {
				return false
			}
		case "object", "model":
			var v string
			var isStr bool
			if j, v, isStr, ok = scanValueStr(s, j, 1); !ok {
				return false
			}
			if key == "object" && isStr && v == "error" {
				return false
			}
			if key == "model" && isStr {
				c.model, c.hasModel = v, true
			}
		default:
			if j, ok = jsonscan.Value(s, j, 1, scanMaxDepth); !ok {
				return false
			}
		}
		switch key {
		case "usage":
			c.usage = s[start:j]
		case "timings":
			c.timings = s[start:j]
		}
		var done bool
		if i, done, ok = jsonscan.Next(s, j, '}'); !ok {
			return false
		}
		if done {
			return jsonscan.WS(s, i) == len(s)
		}
	}
}

// choicesRead is what a chunk's choices say, in the order the general
// decoder applies it.
type choicesRead struct {
	n       int    // how many choices
	ops     [4]op  // the first pieces, without allocating
	more    []op   // the rest
	nops    int    // len(ops) used
	index   int    // the last choice index read
	indexed bool   // an index was read
	finish  string // the last finish reason read ("" : none)
}

// op is one piece of a choice, applied in order: text (content, refusal)
// or a delta's reasoning.
type op struct {
	reasoning bool
	s         string
}

func (r *choicesRead) add(o op) {
	if o.s == "" {
		return
	}
	if r.nops < len(r.ops) {
		r.ops[r.nops] = o
		r.nops++
		return
	}
	r.more = append(r.more, o)
}

// apply writes the choices into d as decodeChatChoice does, choice after
// choice: text and reasoning appended, the last index and finish kept.
func (r *choicesRead) apply(d *Delta) {
	for _, o := range r.ops[:r.nops] {
		o.applyTo(d)
	}
	for _, o := range r.more {
		o.applyTo(d)
	}
	if r.indexed {
		d.Choice = r.index
	}
	setFinish(d, r.finish)
}

func (o op) applyTo(d *Delta) {
	if o.reasoning {
		d.Reasoning += o.s
	} else {
		d.Text += o.s
	}
}

// read reads and validates the choices value at s[i], an array of
// objects, and returns the index after it; false for anything else.
func (r *choicesRead) read(s string, i int) (int, bool) {
	if s[i] != '[' {
		return 0, false // null or another type: the general decoder's quirks
	}
	i = jsonscan.WS(s, i+1)
	if i >= len(s) {
		return 0, false
	}
	if s[i] == ']' {
		return i + 1, true
	}
	for {
		if s[i] != '{' {
			return 0, false
		}
		r.n++
		j, ok := r.readChoice(s, i)
		if !ok {
			return 0, false
		}
		var done bool
		if i, done, ok = jsonscan.Next(s, j, ']'); !ok || done {
			return i, ok
		}
	}
}

// readChoice reads one choice object at s[i] and returns the index after it.
func (r *choicesRead) readChoice(s string, i int) (int, bool) {
	i = jsonscan.WS(s, i+1)
	if i >= len(s) {
		return 0, false
	}
	if s[i] == '}' {
		return i + 1, true
	}
	for {
		key, j, ok := jsonscan.Key(s, i)
		if !ok {
			return 0, false
		}
		switch key {
		case "index":
			var n int
			if j, n, ok = jsonscan.SmallInt(s, j); !ok {
				return 0, false
			}
			r.index, r.indexed = n, true
		case "finish_reason":
			var v string
			var isStr bool
			if j, v, isStr, ok = scanValueStr(s, j, 3); !ok {
				return 0, false
			}
			if isStr && v != "" {
				r.finish = v
			}
		case "delta":
			if j, ok = r.readDelta(s, j); !ok {
				return 0, false
			}
		default:
			if j, ok = jsonscan.Value(s, j, 3, scanMaxDepth); !ok {
				return 0, false
			}
		}
		var done bool
		if i, done, ok = jsonscan.Next(s, j, '}'); !ok || done {
			return i, ok
		}
	}
}

// readDelta reads a choice's delta at s[i]: its text and reasoning, in
// order; null is no delta. Tool calls (an array), or a delta of another
// type, are the general decoder's.
func (r *choicesRead) readDelta(s string, i int) (int, bool) {
	if jsonscan.Literal(s, i, "null") {
		return i + len("null"), true
	}
	if s[i] != '{' {
		return 0, false
	}
	var reasoningContent, reasoning string
	end := 0
	i = jsonscan.WS(s, i+1)
	if i >= len(s) {
		return 0, false
	}
	if s[i] == '}' {
		end = i + 1
	}
	for end == 0 {
		key, j, ok := jsonscan.Key(s, i)
		if !ok {
			return 0, false
		}
		if key == "tool_calls" && s[j] == '[' { // tool calls are the general decoder's
			return 0, false
		}
		var v string
		var isStr bool
		if j, v, isStr, ok = scanValueStr(s, j, 4); !ok {
			return 0, false
		}
		if isStr {
			switch key {
			case "content", "refusal":
				r.add(op{s: v})
			case "reasoning_content":
				reasoningContent = v
			case "reasoning":
				reasoning = v
			}
		}
		var done bool
		if i, done, ok = jsonscan.Next(s, j, '}'); !ok {
			return 0, false
		}
		if done {
			end = i
		}
	}
	if reasoningContent != "" { // a delta carrying both names is counted once
		r.add(op{reasoning: true, s: reasoningContent})
	} else {
		r.add(op{reasoning: true, s: reasoning})
	}
	return end, true
}

// scanValueStr validates the value at s[i] and, when it is a string,
// returns it unescaped (isStr), as gjson reads it.
func scanValueStr(s string, i, depth int) (end int, v string, isStr, ok bool) {
	if s[i] != '"' {
		end, ok = jsonscan.Value(s, i, depth, scanMaxDepth)
		return end, "", false, ok
	}
	end, escaped, ok := jsonscan.String(s, i)
	if !ok {
		return 0, "", false, false
	}
	if escaped {
		return end, gjson.Parse(s[i:end]).Str, true, true
	}
	return end, s[i+1 : end-1], true, true
}
