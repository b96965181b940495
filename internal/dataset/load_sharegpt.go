package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// shareGPTConversation is one element of a ShareGPT dump. Both the original
// {from, value} turns and {role, content} turns are accepted.
type shareGPTConversation struct {
	ID            json.RawMessage `json:"id"`
	Conversations []shareGPTTurn  `json:"conversations"`
	Conversation  []shareGPTTurn  `json:"conversation"`
	Messages      []shareGPTTurn  `json:"messages"`
}

type shareGPTTurn struct {
	From    string `json:"from"`
	Value   string `json:"value"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

var shareGPTRoles = map[string]string{ //nolint:gochecknoglobals // read-only
	"human": "user", "user": "user", "gpt": "assistant", "chatgpt": "assistant", "bard": "assistant",
	"bing": "assistant", "assistant": "assistant", "model": "assistant", "system": "system",
}

// readShareGPT reads a JSON array of conversations, or one conversation per
// line. allTurns makes one record per user turn, its history included.
func readShareGPT(data []byte, name string, allTurns bool) ([]record, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) > 0 && trimmed[0] == '{' {
		return readShareGPTLines(data, name, allTurns)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, fmt.Errorf("%s:%d: a ShareGPT file is a JSON array of conversations", name, lineAt(data, dec.InputOffset()))
	}
	var recs []record
	for i := 0; dec.More(); i++ {
		start := nextNonSpace(data, dec.InputOffset())
		var c shareGPTConversation
		if err := dec.Decode(&c); err != nil {
			at := start // unexpected EOF: the conversation that never closed
			var se *json.SyntaxError
			if errors.As(err, &se) {
				at = se.Offset
			}
			return nil, fmt.Errorf("%s:%d: conversation %d: invalid JSON: %w", name, lineAt(data, at), i, err)
		}
		line := lineAt(data, start)
		rs, err := c.records(line, allTurns)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: conversation %d: %w", name, line, i, err)
		}
		recs = append(recs, rs...)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("%s:%d: unterminated array: %w", name, lineAt(data, dec.InputOffset()), err)
	}
	return recs, nil
}

func readShareGPTLines(data []byte, name string, allTurns bool) ([]record, error) {
	var recs []record
	err := eachLine(data, func(line int, raw []byte) error {
		if raw = bytes.TrimSpace(raw); len(raw) == 0 {
			return nil
		}
		var c shareGPTConversation
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("%s:%d: invalid JSON: %w", name, line, err)
		}
		rs, err := c.records(line, allTurns)
		if err != nil {
			return fmt.Errorf("%s:%d: %w", name, line, err)
		}
		recs = append(recs, rs...)
		return nil
	})
	return recs, err
}

func (c *shareGPTConversation) records(line int, allTurns bool) ([]record, error) {
	turns := c.Conversations
	if turns == nil {
		turns = c.Conversation
	}
	if turns == nil {
		turns = c.Messages
	}
	if turns == nil {
		return nil, errors.New(`no "conversations" array`)
	}
	id := conversationID(c.ID, line)
	var msgs []Message
	var recs []record
	userTurn := 0
	for i, t := range turns {
		who, text := t.From, t.Value
		if who == "" {
			who, text = t.Role, t.Content
		}
		role, ok := shareGPTRoles[who]
		if !ok {
			return nil, fmt.Errorf("turn %d: unknown speaker %q", i, who)
		}
		msgs = append(msgs, Message{Role: role, Content: text})
		if role != "user" {
			continue
		}
		userTurn++
		r := record{line: line, messages: msgs[:len(msgs):len(msgs)], conversation: id, turn: userTurn}
		if i+1 < len(turns) {
			next := turns[i+1]
			if reply := next.Value + next.Content; shareGPTRoles[next.From+next.Role] == "assistant" {
				r.reference = reply
			}
		}
		recs = append(recs, r)
		if !allTurns {
			break
		}
	}
	return recs, nil // a conversation without a user turn gives nothing
}

func conversationID(raw json.RawMessage, line int) string {
	var s string
	if json.Unmarshal(raw, &s) == nil && s != "" && len(s) <= 64 {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return "line" + strconv.Itoa(line)
}

// lineAt is the 1-based line of byte offset off.
func lineAt(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

func nextNonSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',':
			off++
		default:
			return off
		}
	}
	return off
}
