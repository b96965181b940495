package protocol

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJoinURL(t *testing.T) {
	t.Parallel()
	base := "http://llm.test/v1"
	require.Equal(t, base, JoinURL(base, ""))
	require.Equal(t, base+"/chat/completions", JoinURL(base, "/chat/completions"))
	require.Equal(t, base+"/chat/completions", JoinURL(base, "chat/completions"))
	require.Equal(t, "https://other.test/x", JoinURL(base, "https://other.test/x"), "a whole URL replaces the base")
	require.Equal(t, "http://other.test/x", JoinURL(base, "http://other.test/x"))
	require.Equal(t, base+"/models?x=1", JoinURL(base, "/models?x=1"), "the path's own query")
}

// A base URL's query (Azure's api-version, Gemini's key) stays on the
// request, after the joined path, not inside it.
func TestJoinURLBaseQuery(t *testing.T) {
	t.Parallel()
	azure := "https://res.openai.azure.com/openai/deployments/gpt-4o?api-version=2024-02-01"
	require.Equal(t, "https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01",
		JoinURL(azure, "/chat/completions"))
	require.Equal(t, "https://res.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01",
		JoinURL("https://res.openai.azure.com/openai/deployments/gpt-4o/?api-version=2024-02-01", "chat/completions"),
		"a slash before the query is not doubled")
	require.Equal(t, azure, JoinURL(azure, ""))
	gemini := "https://generativelanguage.googleapis.com/v1beta?key=AIzaSyEXAMPLE"
	require.Equal(t,
		"https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?key=AIzaSyEXAMPLE&alt=sse",
		JoinURL(gemini, "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"), "both queries are kept")
	require.Equal(t, "http://llm.test/v1/chat/completions?a=1", JoinURL("http://llm.test/v1?a=1#frag", "/chat/completions"),
		"a fragment is never sent")
}
