package tracectx

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

var valid = regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$`)

func TestNextIsValidAndDistinct(t *testing.T) {
	g, err := NewGenerator(1)
	require.NoError(t, err)
	seen := map[string]bool{}
	for range 10000 {
		c := g.Next()
		h := c.String()
		require.Regexp(t, valid, h)
		require.True(t, c.Sampled)
		require.False(t, seen[c.TraceIDHex()], "a trace id repeats")
		seen[c.TraceIDHex()] = true
		back, ok := Parse(h)
		require.True(t, ok, h)
		require.Equal(t, c, back)
	}
}

func TestSampling(t *testing.T) {
	g, err := NewGenerator(0.25)
	require.NoError(t, err)
	n := 0
	for range 20000 {
		if g.Next().Sampled {
			n++
		}
	}
	require.InDelta(t, 0.25, float64(n)/20000, 0.02)
	g, err = NewGenerator(0)
	require.NoError(t, err)
	require.False(t, g.Next().Sampled)
	require.True(t, valid.MatchString(g.Next().String()), "an unsampled call still carries its context")
	_, err = NewGenerator(1.5)
	require.Error(t, err)
}

// The spec's own example, and values a server must ignore.
func TestParse(t *testing.T) {
	c, ok := Parse("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
	require.True(t, ok)
	require.Equal(t, "0af7651916cd43dd8448eb211c80319c", c.TraceIDHex())
	require.True(t, c.Sampled)
	_, ok = Parse("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra")
	require.True(t, ok, "a later version may append fields")
	for _, bad := range []string{
		"", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
		"00-00000000000000000000000000000000-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
		"ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
		"00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
		"00-0af7651916cd43dd8448eb211c8031zz-b7ad6b7169203331-01",
	} {
		_, ok := Parse(bad)
		require.Falsef(t, ok, "%q", bad)
	}
}

func TestChildKeepsTheTraceWithANewParent(t *testing.T) {
	g, err := NewGenerator(0.5)
	require.NoError(t, err)
	for range 1000 {
		c := g.Next()
		k := g.Child(c)
		require.Equal(t, c.TraceID, k.TraceID)
		require.Equal(t, c.Sampled, k.Sampled, "one sampling decision per trace")
		require.NotEqual(t, c.SpanID, k.SpanID)
		require.Regexp(t, valid, k.String())
	}
}
