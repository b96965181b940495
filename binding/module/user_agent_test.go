package module

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/guregu/null.v3"
)

// The User-Agent a call sends follows k6's userAgent option as k6/http's
// requests do: k6's default when the script sets none (the option then
// holds "Grafana k6/<version>" without being Valid), the script's value,
// none at all for "", and a client's or call's own header over it.
func TestUserAgentIsK6s(t *testing.T) {
	srv, lastRequest := streamServer(t, 0, 0, []string{"hi"})
	for _, tc := range []struct {
		name   string
		option null.String
		params string
		want   []string // the request's User-Agent values
	}{
		{"k6's default", null.NewString("Grafana k6/1.8.1", false), `{}`, []string{"Grafana k6/1.8.1"}},
		{"the script's", null.StringFrom("my-test/2"), `{}`, []string{"my-test/2"}},
		{"none", null.StringFrom(""), `{}`, nil},
		{"the call's header over it", null.NewString("Grafana k6/1.8.1", false),
			`{ headers: { 'User-Agent': 'mine' } }`, []string{"mine"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vu := newTestVU(t, fmt.Sprintf(`const client = new llm.Client({ baseURL: %q, model: 'm' });`, srv.URL+"/v1"))
			vu.state().Options.UserAgent = tc.option
			res := vu.chat(`{ messages: [{ role: 'user', content: 'hi' }] }, ` + tc.params)
			require.Equal(t, true, res["ok"], "%v", res["error"])
			require.Equal(t, tc.want, lastRequest().Header.Values("User-Agent"))
		})
	}
}
