package module

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.k6.io/k6/metrics"
)

// k6's systemTags option decides the tags k6 defines (status, proto, name):
// with --system-tags=status,name the llm_* samples carry no proto, while the
// module's own tags (protocol, cache) stay.
func TestSystemTagsOptionTrimsK6Tags(t *testing.T) {
	t.Parallel()
	srv, _ := streamServer(t, 0, 0, []string{"a", "b"})
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q, name: 'c'});`, srv.URL))
	vu.state().Options.SystemTags = metrics.ToSystemTagSet([]string{"status", "name"})
	res := vu.chat(`{messages: []}`)
	require.Equal(t, true, res["ok"], "%v", res["error"])
	require.Equal(t, "HTTP/1.1", res["proto"], "the result still says it")
	got := vu.drain()
	require.NotEmpty(t, got["llm_ttft"])
	for _, s := range got["llm_ttft"] {
		_, hasProto := s.Tags.Get("proto")
		require.False(t, hasProto, "proto is not in systemTags")
		require.Equal(t, "200", tagOf(t, s, "status"))
		require.Equal(t, "c", tagOf(t, s, "name"))
		require.NotEmpty(t, tagOf(t, s, "protocol"), "the module's own tags stay")
	}

	vu.state().Options.SystemTags = metrics.ToSystemTagSet([]string{"proto"})
	vu.chat(`{messages: []}`)
	got = vu.drain()
	require.NotEmpty(t, got["llm_ttft"])
	for _, s := range got["llm_ttft"] {
		_, hasStatus := s.Tags.Get("status")
		_, hasName := s.Tags.Get("name")
		require.False(t, hasStatus || hasName, "status and name are not in systemTags")
		require.Equal(t, "HTTP/1.1", tagOf(t, s, "proto"))
	}
}
