package sim

import (
	"encoding/json"
)

// Each protocol's tool declarations and history, as its API documents them:
// the tools a request offers and how many tool-call answers its history
// holds since the last user turn (a turn that is only tool results is not a
// user turn).

// openAIFunctionTools reads [{"type":"function","function":{name,parameters}}]
// (OpenAI chat and Ollama).
func openAIFunctionTools(raw json.RawMessage) []declaredTool {
	var tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	_ = json.Unmarshal(raw, &tools)
	var out []declaredTool
	for _, t := range tools {
		if t.Function.Name != "" {
			out = append(out, declaredTool{Name: t.Function.Name, Props: declaredProps(t.Function.Parameters)})
		}
	}
	return out
}

// chatToolHistory reads OpenAI-chat-shaped messages: an assistant message
// with tool_calls is a tool round; a user message starts a turn.
func chatToolHistory(body []byte) (toolHistory, *apiError) {
	var req struct {
		Tools    json.RawMessage `json:"tools"`
		Messages []struct {
			Role      string            `json:"role"`
			ToolCalls []json.RawMessage `json:"tool_calls"`
		} `json:"messages"`
	}
	if e := decodeBody(body, &req); e != nil {
		return toolHistory{}, e
	}
	th := toolHistory{tools: openAIFunctionTools(req.Tools)}
	for _, m := range req.Messages {
		switch {
		case m.Role == "user":
			th.rounds = 0
		case m.Role == "assistant" && len(m.ToolCalls) > 0:
			th.rounds++
		}
	}
	return th, nil
}

func (openAIChat) toolHistory(body []byte) (toolHistory, *apiError) { return chatToolHistory(body) }

func (o ollama) toolHistory(body []byte) (toolHistory, *apiError) {
	if o.generate {
		return toolHistory{}, badRequest(ToolCallsHeader, "llm-sim answers with tool calls on /api/chat, not /api/generate")
	}
	return chatToolHistory(body)
}

func (anthropic) toolHistory(body []byte) (toolHistory, *apiError) {
	var req struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if e := decodeBody(body, &req); e != nil {
		return toolHistory{}, e
	}
	var th toolHistory
	for _, t := range req.Tools {
		if t.Name != "" {
			th.tools = append(th.tools, declaredTool{Name: t.Name, Props: declaredProps(t.InputSchema)})
		}
	}
	for _, m := range req.Messages {
		var blocks []struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(m.Content, &blocks) // a string content has no blocks
		has := func(typ string) bool {
			for _, b := range blocks {
				if b.Type == typ {
					return true
				}
			}
			return false
		}
		switch {
		case m.Role == "user" && !has("tool_result"):
			th.rounds = 0
		case m.Role == "assistant" && has("tool_use"):
			th.rounds++
		}
	}
	return th, nil
}

func (gemini) toolHistory(body []byte) (toolHistory, *apiError) {
	type decl struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	}
	var req struct {
		Tools []struct {
			Decls      []decl `json:"functionDeclarations"`
			DeclsSnake []decl `json:"function_declarations"`
		} `json:"tools"`
		Contents []struct {
			Role  string                       `json:"role"`
			Parts []map[string]json.RawMessage `json:"parts"`
		} `json:"contents"`
	}
	if e := decodeBody(body, &req); e != nil {
		return toolHistory{}, e
	}
	var th toolHistory
	for _, t := range req.Tools {
		for _, d := range append(t.Decls, t.DeclsSnake...) {
			if d.Name != "" {
				th.tools = append(th.tools, declaredTool{Name: d.Name, Props: declaredProps(d.Parameters)})
			}
		}
	}
	for _, c := range req.Contents {
		has := func(key string) bool {
			for _, p := range c.Parts {
				if _, ok := p[key]; ok {
					return true
				}
			}
			return false
		}
		switch {
		case c.Role == "model" && has("functionCall"):
			th.rounds++
		case c.Role != "model" && !has("functionResponse"):
			th.rounds = 0
		}
	}
	return th, nil
}

// toolHistory of the Responses API: a function_call item (or a run of them,
// the parallel calls of one answer) is a tool round; a user item starts a
// turn. A string input is one user turn.
func (openAIResponses) toolHistory(body []byte) (toolHistory, *apiError) {
	var req struct {
		Tools []struct {
			Type       string          `json:"type"`
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"tools"`
		Input json.RawMessage `json:"input"`
	}
	if e := decodeBody(body, &req); e != nil {
		return toolHistory{}, e
	}
	var th toolHistory
	for _, t := range req.Tools {
		if t.Name != "" && (t.Type == "" || t.Type == "function") {
			th.tools = append(th.tools, declaredTool{Name: t.Name, Props: declaredProps(t.Parameters)})
		}
	}
	var items []struct {
		Type string `json:"type"`
		Role string `json:"role"`
	}
	_ = json.Unmarshal(req.Input, &items) // a string input has no items
	prevCall := false
	for _, it := range items {
		call := it.Type == "function_call"
		switch {
		case call && !prevCall:
			th.rounds++
		case it.Role == "user":
			th.rounds = 0
		}
		prevCall = call
	}
	return th, nil
}
