package tokenizer

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCountsKnownStrings(t *testing.T) {
	t.Parallel()
	for _, name := range Names() {
		tok, err := Get(name)
		require.NoError(t, err)
		require.Equal(t, name, tok.Name())
		require.Equal(t, 0, tok.Count(""))
		ids := tok.Encode("hello world")
		require.NotEmpty(t, ids)
		require.Equal(t, len(ids), tok.Count("hello world"))
		require.Equal(t, "hello world", tok.Decode(ids))
	}
}

func TestDefaultAndUnknown(t *testing.T) {
	t.Parallel()
	tok, err := Get("")
	require.NoError(t, err)
	require.Equal(t, Default, tok.Name())
	_, err = Get("nope")
	require.ErrorContains(t, err, "unknown tokenizer")
}
