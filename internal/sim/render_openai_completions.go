package sim

import (
	"bytes"
	"encoding/json"
)

// OpenAI legacy Completions: POST /v1/completions.

func init() { registerRoute("/v1/completions", openAICompletions{}) }

type openAICompletions struct{}

func (openAICompletions) name() string     { return "openai-completions" }
func (openAICompletions) idPrefix() string { return "cmpl-" }

func (openAICompletions) errorBody(e *apiError) []byte { return openAIErrorBody(e) }

func (openAICompletions) parse(body []byte) (*genRequest, *apiError) {
	return parseOpenAI(body, func(r *openAIRequest, g *genRequest) *apiError { return completionPrompt(r.Prompt, g) })
}

// completionPrompt accepts a string, a one-element array of strings, or an
// array of token ids.
func completionPrompt(raw json.RawMessage, g *genRequest) *apiError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return badRequest("prompt", "'prompt' is a required property")
	}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &g.Prompt); err != nil {
			return badRequest("prompt", err.Error())
		}
		return nil
	case '[':
		var strs []string
		if err := json.Unmarshal(raw, &strs); err == nil {
			if len(strs) != 1 {
				return badRequest("prompt", "llm-sim supports one prompt per request")
			}
			g.Prompt = strs[0]
			return nil
		}
		var ids []uint32
		if err := json.Unmarshal(raw, &ids); err != nil || len(ids) == 0 {
			return badRequest("prompt", "'prompt' must be a string, an array of one string, or a non-empty array of token ids")
		}
		g.PromptIDs = ids
		return nil
	}
	return badRequest("prompt", "'prompt' must be a string, an array of one string, or an array of token ids")
}

func (openAICompletions) newStream(m *respMeta) streamRenderer {
	return &completionStream{openAIChunks: newOpenAIChunks(m, "text_completion")}
}

type completionStream struct{ openAIChunks }

// start writes nothing: completions have no role chunk.
func (*completionStream) start(eventSink) error { return nil }

func (c *completionStream) tokens(out eventSink, text []byte, n, total int) error {
	b := append(c.begin(), `{"index":0,"text":`...)
	b = appendJSONString(b, text)
	b = append(b, `,"logprobs":null,"finish_reason":null}`...)
	return out.event(c.end(b, total), n)
}

func (c *completionStream) finish(out eventSink, reason string, total int) error {
	b := append(c.begin(), `{"index":0,"text":"","logprobs":null,"finish_reason":`...)
	b = finishReasonJSON(b, reason)
	b = append(b, '}')
	return c.finishChunk(out, b, total)
}

func (openAICompletions) complete(m *respMeta, text []byte, reason string, completion int) []byte {
	return openAIAnswer(m, "text_completion", struct {
		Index        int    `json:"index"`
		Text         string `json:"text"`
		Logprobs     any    `json:"logprobs"`
		FinishReason string `json:"finish_reason"`
	}{Text: string(text), FinishReason: reason}, completion)
}

func (openAICompletions) truncated(m *respMeta) []byte {
	return openAITruncated(m, "text_completion", `{"index":0,"text":"tru`)
}
