package module

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

// A call's result is read from its record as the script reads it, and
// still behaves as a plain object: its keys list and serialise whole, a
// nested object read twice is one object, and the script's own sets and
// deletes hold.
func TestTheResultBehavesAsAPlainObject(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(answer))
	t.Cleanup(srv.Close)
	vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({baseURL: %q});`, srv.URL))
	t.Cleanup(vu.closeIdle)
	vu.run(`client.chat({messages: []}).then(r => {
		globalThis.keys = Object.keys(r);
		globalThis.json = JSON.parse(JSON.stringify(r));
		globalThis.spread = Object.keys({...r}).length;
		globalThis.sameUsage = r.usage === r.usage;
		r.usage.mine = 7;
		globalThis.keptNested = r.usage.mine;
		r.note = 'mine';
		delete r.ttft;
		globalThis.after = [r.note, r.ttft === undefined, 'ttft' in r, 'note' in r, 'ok' in r,
			Object.keys(r).includes('note'), Object.keys(r).includes('ttft')];
	})`)
	rt := vu.rt.VU.Runtime()
	keys := rt.Get("keys").Export().([]any)          //nolint:forcetypeassert
	json := rt.Get("json").Export().(map[string]any) //nolint:forcetypeassert
	require.Len(t, json, len(keys), "JSON.stringify writes every key")
	require.Contains(t, keys, "ttft")
	require.Equal(t, true, json["ok"])
	require.Equal(t, int64(len(keys)), rt.Get("spread").Export())
	require.Equal(t, true, rt.Get("sameUsage").Export(), "a nested object is made once")
	require.Equal(t, int64(7), rt.Get("keptNested").Export())
	require.Equal(t, []any{"mine", true, false, true, true, true, false}, rt.Get("after").Export())
}
