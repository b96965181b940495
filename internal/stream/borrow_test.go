package stream

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// An event's data is borrowed from the read buffer, which later reads
// overwrite: whatever the call keeps from an early event (model,
// first text, a tool call, the finish reason) must be its own copy. Streams
// of ~100 KB read 7 bytes at a time move and overwrite the buffer many times.
func TestWhatTheCallKeepsIsItsOwn(t *testing.T) {
	const filler = 1500
	for _, tc := range []struct {
		protocol string
		body     func() []byte
		tools    bool
	}{
		{"openai-chat", func() []byte {
			var b bytes.Buffer
			b.WriteString(`data: {"id":"req-first","model":"model-first","choices":[{"index":0,"delta":{"role":"assistant","content":"one two three"}}]}` + "\n\n")
			b.WriteString(`data: {"id":"req-first","model":"model-first","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_first","type":"function","function":{"name":"lookup","arguments":"{\"q\":"}}]}}]}` + "\n\n")
			b.WriteString(`data: {"id":"req-first","model":"model-first","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"x\"}"}}]}}]}` + "\n\n")
			for i := range filler {
				fmt.Fprintf(&b, `data: {"id":"req-first","model":"model-first","choices":[{"index":0,"delta":{"content":" w%04d"}}]}`+"\n\n", i)
			}
			b.WriteString(`data: {"id":"req-first","model":"model-first","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n")
			b.WriteString("data: [DONE]\n\n")
			return b.Bytes()
		}, true},
		{"ollama", func() []byte {
			var b bytes.Buffer
			b.WriteString(`{"model":"model-first","message":{"role":"assistant","content":"one two three"},"done":false}` + "\n")
			for i := range filler {
				fmt.Fprintf(&b, `{"model":"model-first","message":{"role":"assistant","content":" w%04d"},"done":false}`+"\n", i)
			}
			b.WriteString(`{"model":"model-first","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop"}` + "\n")
			return b.Bytes()
		}, false},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			spec, err := protocol.Lookup(tc.protocol)
			require.NoError(t, err)
			c := NewCall(Config{Spec: spec, MaxEventSize: 1 << 16, CountTokens: wordCount}, time.Now())
			c.Headers = c.Start
			require.NoError(t, c.Consume(&pieceReader{r: bytes.NewReader(tc.body()), n: 7}))
			r := c.Finish()
			require.Nil(t, r.Err)
			assert.Equal(t, "model-first", r.Model)
			assert.True(t, strings.HasPrefix(r.Text, "one two three w0000 w0001"), "%.40q", r.Text)
			assert.Equal(t, 3+filler, wordCount(r.Text))
			assert.Equal(t, "one two three", c.firstText)
			if tc.tools {
				assert.Equal(t, "tool_calls", r.FinishReason)
				require.Len(t, r.ToolCalls, 1)
				assert.Equal(t, ToolCall{Index: 0, ID: "call_first", Name: "lookup", Arguments: `{"q":"x"}`}, r.ToolCalls[0])
			} else {
				assert.Equal(t, "stop", r.FinishReason)
			}
		})
	}
}
