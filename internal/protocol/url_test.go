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
}
