package sim

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

func TestVocabularyWordsAreOneTokenEach(t *testing.T) {
	tk, err := tokenizer.Get("")
	require.NoError(t, err)
	seen := map[string]bool{}
	ids := vocabIDs()
	for i, w := range vocab {
		assert.False(t, seen[w], "duplicate %q", w)
		seen[w] = true
		assert.Equal(t, 1, tk.Count(w), "%q", w)
		assert.Equal(t, []uint{uint(ids[i])}, tk.Encode(w), "%q", w)
	}
	assert.GreaterOrEqual(t, len(vocab), 200)
	// Any sequence of them counts as exactly its length.
	for seed := range uint64(20) {
		text := string(appendWords(nil, seed, 0, 500))
		assert.Equal(t, 500, tk.Count(text))
		// Rendering in pieces gives the same text.
		var parts []byte
		for from := 0; from < 500; from += 7 {
			parts = appendWords(parts, seed, from, min(7, 500-from))
		}
		assert.Equal(t, text, string(parts))
	}
}

func TestTokenizerCountMatchesEncode(t *testing.T) {
	// promptTokens uses len(Encode) when the cache needs ids, Count otherwise.
	tk, err := tokenizer.Get("")
	require.NoError(t, err)
	for _, s := range []string{"", "hello", "Hello there, how are you?", strings.Repeat("naïve café ", 50), "日本語のテキスト"} {
		assert.Equal(t, tk.Count(s), len(tk.Encode(s)), s)
	}
}

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " back \ slash`, "line\nfeed\r\ttab", "\x00\x01\x1f", "<b>&amp;</b>", "naïve ✓ 日本", "\u2028\u2029", "bad \xff utf8"} {
		b := appendJSONString(nil, s)
		require.True(t, json.Valid(b), "%q -> %s", s, b)
		var back string
		require.NoError(t, json.Unmarshal(b, &back))
		if utf8.ValidString(s) {
			assert.Equal(t, s, back)
		} else {
			assert.Equal(t, strings.ToValidUTF8(s, "\uFFFD"), back)
		}
		assert.Equal(t, b, appendJSONString(nil, []byte(s)))
	}
}

func TestPrefixCacheLRU(t *testing.T) {
	c := newPrefixCache(4, 3)
	a := c.blockHashes(idsFrom(0, 8))   // 2 blocks
	b := c.blockHashes(idsFrom(100, 9)) // 2 blocks (the ninth token is not a whole block)
	require.Len(t, b, 2)
	assert.NotEqual(t, a[1], c.blockHashes(append(idsFrom(0, 4), idsFrom(50, 4)...))[1])
	assert.Equal(t, a[0], c.blockHashes(append(idsFrom(0, 4), idsFrom(50, 4)...))[0])
	c.insert(a)
	assert.Equal(t, 2, c.match(a, 10))
	assert.Equal(t, 1, c.match(a, 1), "limit")
	c.insert(b) // capacity 3: one block goes, the least recently used: a's tail
	assert.Equal(t, 3, c.len())
	assert.Equal(t, 1, c.match(a, 10), "the chain is cut at its end, not its root")
	assert.Equal(t, 2, c.match(b, 10))
	// A chain that misses its first block matches nothing.
	assert.Equal(t, 0, c.match(c.blockHashes(idsFrom(1, 8)), 10))
}
