package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// jsonlRecord is one line of a JSON-lines prompt file. It accepts OpenAI chat
// requests ({messages}), batch-API lines ({body: {messages}}) and bare
// prompts ({prompt}); max_tokens and a reference answer hint the output
// length, and category, when present, overrides the bucket rules.
type jsonlRecord struct {
	Messages            []jsonMessage `json:"messages"`
	Prompt              *string       `json:"prompt"`
	Body                *jsonlRecord  `json:"body"`
	MaxTokens           *int          `json:"max_tokens"`
	MaxCompletionTokens *int          `json:"max_completion_tokens"`
	MaxTokensCamel      *int          `json:"maxTokens"`
	Category            string        `json:"category"`
	Completion          string        `json:"completion"`
	Response            string        `json:"response"`
}

type jsonMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

func readJSONL(data []byte, name string) ([]record, error) {
	var recs []record
	err := eachLine(data, func(line int, raw []byte) error {
		if raw = bytes.TrimSpace(raw); len(raw) == 0 {
			return nil
		}
		r, err := parseJSONLRecord(raw)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		r.line = line
		recs = append(recs, r)
		return nil
	})
	return recs, err
}

func parseJSONLRecord(raw []byte) (record, error) {
	var j jsonlRecord
	if err := json.Unmarshal(raw, &j); err != nil {
		return record{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if j.Body != nil { // OpenAI batch input: the request is in body
		inner := *j.Body
		if inner.Category == "" {
			inner.Category = j.Category
		}
		j = inner
	}
	r := record{category: j.Category, reference: j.Completion}
	if r.reference == "" {
		r.reference = j.Response
	}
	for _, p := range []*int{j.MaxTokens, j.MaxCompletionTokens, j.MaxTokensCamel} {
		if p != nil {
			if *p < 1 {
				return record{}, fmt.Errorf("max_tokens must be positive, got %d", *p)
			}
			r.maxTokens = *p
			break
		}
	}
	if r.category != "" && !categoryName.MatchString(r.category) {
		return record{}, fmt.Errorf("category %q: use 1-64 letters, digits, '_', '-' or '.'", r.category)
	}
	switch {
	case len(j.Messages) > 0:
		for i, m := range j.Messages {
			msg, err := chatMessage(m)
			if err != nil {
				return record{}, fmt.Errorf("messages[%d]: %w", i, err)
			}
			r.messages = append(r.messages, msg)
		}
	case j.Prompt != nil:
		if strings.TrimSpace(*j.Prompt) == "" {
			return record{}, errors.New("prompt is empty")
		}
		r.messages = []Message{{Role: "user", Content: *j.Prompt}}
	default:
		return record{}, errors.New(`no "messages" or "prompt"`)
	}
	return r, nil
}

var chatRoles = map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true} //nolint:gochecknoglobals,lll // read-only

func chatMessage(m jsonMessage) (Message, error) {
	if !chatRoles[m.Role] {
		return Message{}, fmt.Errorf("role %q is not a chat role (system, developer, user, assistant, tool)", m.Role)
	}
	content, err := messageText(m.Content)
	if err != nil {
		return Message{}, err
	}
	return Message{Role: m.Role, Content: content}, nil
}

// messageText accepts a string, null (an assistant turn with only tool calls)
// or an array of content parts, whose text parts are joined.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("content must be a string or an array of {type, text} parts")
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "input_text" {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(p.Text)
		}
	}
	return b.String(), nil
}
