package sim

import (
	"encoding/json"
	"fmt"
)

// What a request that reasons must send back of earlier reasoning, as the
// APIs document it, and only that:
//   - Anthropic, with thinking on: the thinking blocks the client sends back
//     must be the ones the API streamed, unmodified (a thinking block's
//     signature covers its text; a redacted block's data is the API's own),
//     and a tool-use turn's last assistant message must start with its
//     thinking block: otherwise 400 invalid_request_error.
//   - Gemini (3), with thinking: in the current turn (since the last user
//     text), each step's first functionCall part must carry the
//     thoughtSignature it streamed with: otherwise 400 INVALID_ARGUMENT.
//
// OpenAI chat, Ollama and Responses accept a history without its reasoning.

// checkReasoning checks the history of a request that reasons (on).
func checkReasoning(p protocol, body []byte, on bool, key signKey) *apiError {
	if !on {
		return nil
	}
	switch p.name() {
	case "anthropic":
		return checkAnthropicThinking(body, key)
	case "gemini":
		return checkGeminiSignatures(body)
	}
	return nil
}

type anthropicBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
	Data      string `json:"data"`
}

func checkAnthropicThinking(body []byte, key signKey) *apiError {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil // parse() has said what is wrong with it
	}
	lastAssistant := -1
	var blocksOf [][]anthropicBlock
	for i, m := range req.Messages {
		var blocks []anthropicBlock
		_ = json.Unmarshal(m.Content, &blocks) // a string content has no blocks
		blocksOf = append(blocksOf, blocks)
		if m.Role == "assistant" {
			lastAssistant = i
		}
		for j, b := range blocks {
			switch {
			case b.Type == "thinking" && b.Signature != key.sign(anthropicThinkingSig, []byte(b.Thinking)):
				return badRequest(fmt.Sprintf("messages.%d.content.%d", i, j),
					fmt.Sprintf("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j))
			case b.Type == "redacted_thinking" && !key.issuedRedacted(b.Data):
				return badRequest(fmt.Sprintf("messages.%d.content.%d", i, j),
					fmt.Sprintf("messages.%d.content.%d: Invalid `data` in `redacted_thinking` block", i, j))
			}
		}
	}
	n := len(req.Messages)
	if lastAssistant < 0 || lastAssistant != n-2 || !hasBlock(blocksOf[n-1], "tool_result") ||
		!hasBlock(blocksOf[lastAssistant], "tool_use") {
		return nil // not a tool-use turn
	}
	first := "text"
	if b := blocksOf[lastAssistant]; len(b) > 0 {
		first = b[0].Type
	}
	if first == "thinking" || first == "redacted_thinking" {
		return nil
	}
	param := fmt.Sprintf("messages.%d.content.0.type", lastAssistant)
	return badRequest(param, param+": Expected `thinking` or `redacted_thinking`, but found `"+first+"`. "+
		"When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost "+ //nolint:misspell // Anthropic's own message, its spelling included
		"set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid "+
		"this requirement, disable `thinking`. Please consult our documentation at "+
		"https://docs.claude.com/en/docs/build-with-claude/extended-thinking")
}

func hasBlock(blocks []anthropicBlock, typ string) bool {
	for _, b := range blocks {
		if b.Type == typ {
			return true
		}
	}
	return false
}

func checkGeminiSignatures(body []byte) *apiError {
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text             *string                `json:"text"`
				FunctionCall     *struct{ Name string } `json:"functionCall"`
				FunctionResponse json.RawMessage        `json:"functionResponse"`
				ThoughtSignature string                 `json:"thoughtSignature"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil // parse() has said what is wrong with it
	}
	turn := 0 // the current turn starts at the last user text
	for i, c := range req.Contents {
		if c.Role == "model" {
			continue
		}
		for _, p := range c.Parts {
			if p.Text != nil && p.FunctionResponse == nil {
				turn = i
			}
		}
	}
	for i := turn; i < len(req.Contents); i++ {
		c := req.Contents[i]
		if c.Role != "model" {
			continue
		}
		for _, p := range c.Parts {
			if p.FunctionCall == nil {
				continue
			}
			if p.ThoughtSignature == "" {
				return badRequest("contents", fmt.Sprintf(
					"Function call is missing a thought_signature in functionCall parts. This is required for tools to work "+
						"correctly, and missing thought_signature may lead to degraded model performance. Additional data, "+
						"function call `default_api:%s` , position %d. Please refer to "+
						"https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", p.FunctionCall.Name, i+1))
			}
			break // a step's first call carries its signature; parallel calls after it do not
		}
	}
	return nil
}
