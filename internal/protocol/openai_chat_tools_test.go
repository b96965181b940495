package protocol

import "testing"

// A null tool_calls beside the content is no tool call (proxies that send
// every delta field send it null when unset), nor is an element of the
// array that is not an object.
func TestNullToolCallsAreNoCall(t *testing.T) {
	for _, data := range []string{
		`{"choices":[{"index":0,"delta":{"content":"a","tool_calls":null}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"a","tool_calls":[null,7]}}]}`,
		`{"choices":[{"index":0,"delta":{"content":"a","tool_calls":{"index":0}}}]}`,
	} {
		var d Delta
		if err := decodeOpenAIChunk(Event{Data: data}, &d, decodeChatChoice); err != nil || d.Text != "a" || len(d.ToolCalls) != 0 {
			t.Fatalf("%s: %+v, %v; want the text and no tool call", data, d, err)
		}
	}
}
