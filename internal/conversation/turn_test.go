package conversation

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestItemUserTextIsTheLastUserMessage(t *testing.T) {
	item := map[string]any{"messages": []any{
		map[string]any{"role": "system", "content": "Be brief."},
		map[string]any{"role": "user", "content": "first"},
		map[string]any{"role": "assistant", "content": "canned answer"},
		map[string]any{"role": "user", "content": "second"},
	}}
	text, err := ItemUserText(item)
	require.NoError(t, err)
	assert.Equal(t, "second", text)

	text, err = ItemUserText(map[string]any{"prompt": "a completion prompt"})
	require.NoError(t, err)
	assert.Equal(t, "a completion prompt", text)

	_, err = ItemUserText(map[string]any{"messages": []any{map[string]any{"role": "system", "content": "x"}}})
	require.ErrorContains(t, err, "no user message")
}

func TestTurnParamsMergeTheConversationsAndTheTurns(t *testing.T) {
	conv := map[string]any{
		"tags":    map[string]any{"suite": "chat", "lang": "en"},
		"headers": map[string]any{"X-A": "1"},
		"timeout": "30s",
	}
	own := map[string]any{"tags": map[string]any{"lang": "fr"}, "headers": map[string]any{"X-B": "2"}, "timeout": "5s"}
	session := http.Header{"X-Session": {"k1"}}
	got := TurnParams(conv, own, session, 3, "support")
	assert.Equal(t, map[string]any{
		"tags":    map[string]any{"suite": "chat", "lang": "fr", "turn": "3", "category": "support"},
		"headers": map[string]any{"X-A": "1", "X-B": "2", "X-Session": "k1"},
		"timeout": "5s",
	}, got)
	assert.Equal(t, map[string]any{"suite": "chat", "lang": "en"}, conv["tags"], "the conversation's own tags stay as they were")

	got = TurnParams(nil, map[string]any{"tags": map[string]any{"category": "code"}}, nil, 1, "support")
	assert.Equal(t, "code", got["tags"].(map[string]any)["category"], "a turn's category tag wins over the conversation's")
}
