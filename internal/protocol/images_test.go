package protocol

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func bodyOf(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}

func TestImagesGoWhereEachProtocolExpectsThem(t *testing.T) {
	t.Parallel()
	im := []Image{{MIME: "image/png", Base64: "iVBO"}}
	chat := `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"what is this?"}]}`
	cases := []struct{ protocol, body, want string }{
		{"openai-chat", chat, `{"messages":[{"role":"system","content":"s"},{"role":"user","content":[
			{"type":"text","text":"what is this?"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}}]}]}`},
		{"anthropic", chat, `{"messages":[{"role":"system","content":"s"},{"role":"user","content":[
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}},{"type":"text","text":"what is this?"}]}]}`},
		{"ollama", chat, `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"what is this?","images":["iVBO"]}]}`},
		{"ollama", `{"prompt":"p"}`, `{"prompt":"p","images":["iVBO"]}`},
		{"gemini", `{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"b"}]},{"parts":[{"text":"c"}]}]}`,
			`{"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"b"}]},{"parts":[{"text":"c"},
			{"inline_data":{"mime_type":"image/png","data":"iVBO"}}]}]}`},
		{"openai-responses", `{"input":"describe"}`, `{"input":[{"role":"user","content":[{"type":"input_text","text":"describe"},
			{"type":"input_image","image_url":"data:image/png;base64,iVBO"}]}]}`},
		{"tgi", `{"inputs":"What is shown?"}`, `{"inputs":"![](data:image/png;base64,iVBO)What is shown?"}`},
	}
	for _, c := range cases {
		b := bodyOf(t, c.body)
		require.NoError(t, AttachImages(c.protocol, b, im), c.protocol)
		got, err := json.Marshal(b)
		require.NoError(t, err)
		assert.JSONEq(t, c.want, string(got), c.protocol)
	}
}

func TestAttachingImagesLeavesTheCallersMessagesAlone(t *testing.T) {
	t.Parallel()
	msgs := []any{map[string]any{"role": "user", "content": "hi"}}
	first := map[string]any{"messages": msgs}
	require.NoError(t, AttachImages("openai-chat", first, []Image{{MIME: "image/jpeg", Base64: "x"}}))
	assert.Equal(t, "hi", msgs[0].(map[string]any)["content"], "the item's message is unchanged")
	second := map[string]any{"messages": msgs} // a fallback built from the same item
	require.NoError(t, AttachImages("openai-chat", second, []Image{{MIME: "image/jpeg", Base64: "x"}}))
	assert.Len(t, second["messages"].([]any)[0].(map[string]any)["content"], 2, "one text and one image, not two images")
}

func TestImagesWhereTheyCannotGoAreErrors(t *testing.T) {
	t.Parallel()
	im := []Image{{MIME: "image/png", Base64: "x"}}
	for _, c := range []struct{ protocol, body, want string }{
		{"openai-completions", `{"prompt":"p"}`, "takes no image input"},
		{"llamacpp", `{"prompt":"p"}`, "takes no image input"},
		{"openai-chat", `{"messages":[{"role":"assistant","content":"a"}]}`, "no user turn"},
		{"openai-chat", `{"prompt":"p"}`, "no messages array"},
		{"openai-chat", `{"messages":[{"role":"user","content":7}]}`, "messages[0]: content is neither"},
		{"gemini", `{"contents":[{"role":"user","parts":"x"}]}`, "parts is not an array"},
		{"tgi", `{"prompt":"p"}`, "no inputs string"},
	} {
		err := AttachImages(c.protocol, bodyOf(t, c.body), im)
		require.Error(t, err, c.protocol)
		assert.Contains(t, err.Error(), c.want, c.protocol)
	}
	assert.NoError(t, AttachImages("sse", map[string]any{}, nil), "no images: nothing to do anywhere")
}
