package conversation

import (
	"errors"
	"maps"
	"net/http"
	"strconv"
)

// A turn as the script gives it, made into the chat call a turn is: the
// user's text of a dataset item, and the call's params from the
// conversation's and the turn's own.

// ItemUserText is a dataset item's user turn: its last user message (a
// synthetic or ShareGPT item carries a canned history before it, which a
// live conversation replaces with what the server answered), else its
// prompt.
func ItemUserText(item map[string]any) (string, error) {
	msgs, _ := item["messages"].([]any)
	for i := len(msgs) - 1; i >= 0; i-- {
		m, _ := msgs[i].(map[string]any)
		if m["role"] == "user" {
			if s, ok := m["content"].(string); ok {
				return s, nil
			}
		}
	}
	if p, ok := item["prompt"].(string); ok && p != "" {
		return p, nil
	}
	return "", errors.New("conversation: say(item): the item has no user message (a dataset item from Dataset.synthetic or Dataset.load)")
}

// TurnParams are turn's chat params: the conversation's (conv), the turn's
// own over them (tags and headers merged key by key), the session's headers,
// the turn tag and, unless a tag sets it, the conversation's category.
func TurnParams(conv, own map[string]any, session http.Header, turn int, category string) map[string]any {
	merged := make(map[string]any, len(conv)+len(own)+2)
	tags, headers := map[string]any{}, map[string]any{}
	for _, src := range []map[string]any{conv, own} {
		for k, v := range src {
			switch m, _ := v.(map[string]any); k { // params are checked when read: tags and headers are objects
			case "tags":
				maps.Copy(tags, m)
			case "headers":
				maps.Copy(headers, m)
			default:
				merged[k] = v
			}
		}
	}
	for k := range session {
		headers[k] = session.Get(k)
	}
	tags["turn"] = strconv.Itoa(turn)
	if _, set := tags["category"]; !set && category != "" {
		tags["category"] = category
	}
	merged["tags"], merged["headers"] = tags, headers
	return merged
}
