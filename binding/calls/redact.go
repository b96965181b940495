package calls

// Credentials never reach a log, an error, a result or a report: the
// client's Redactor (internal/redact) learns what its options set, a call's
// adds what the call's params set, and every error text and debug dump of
// the call goes through the call's.

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/redact"
)

// clientRedactor knows a client's secrets: its API key, its credential
// headers, a key in its base URL or path, and every header of its metrics
// endpoint (any of them may be that endpoint's credential).
func clientRedactor(opts *config.Client) *redact.Redactor {
	r := redact.New().Key(opts.APIKey).Headers(opts.Headers).URL(opts.BaseURL).URL(opts.Path)
	for _, sm := range opts.ServerMetrics {
		r = r.Key(slices.Collect(maps.Values(sm.Headers))...).URL(sm.URL)
	}
	return r
}

// callRedactor is the client's Redactor with what one call adds: its
// params' credential headers and a key in its URL. A call that adds nothing
// gets the client's own (internal/redact returns it unchanged).
func (c *Client) callRedactor(params *config.Call, url string) *redact.Redactor {
	return c.redact.Headers(params.Headers).URL(url)
}

// setRedactor makes red clean r's error texts and debug dump.
func (c *Client) setRedactor(r *request, red *redact.Redactor) {
	r.redact, r.stream.Redact = red, c.cleaner.of(red)
}

// httpDebug is the --http-debug dump of a call's requests and answers, red
// cleaning it, when k6's httpDebug option asks for one (nil, nil when not):
// k6's own dump would print the API key, so the client writes it instead.
func httpDebug(st *lib.State, red *redact.Redactor) (func(*http.Request), func(*http.Response)) {
	debug := st.Options.HTTPDebug.String
	if debug == "" || st.Logger == nil {
		return nil, nil
	}
	log := st.Logger.WithField("source", "http-debug")
	return func(req *http.Request) { log.Info(red.DumpRequest(req, debug == "full")) },
		func(resp *http.Response) { log.Info(red.DumpResponse(resp)) }
}

// cleanerMemo is the last call redactor and its Clean as a function: a
// method value made for every call was an allocation, for the client's own
// redactor nearly every time. The event loop owns it (calls plan there).
type cleanerMemo struct {
	red   *redact.Redactor
	clean func(string) string
}

func (m *cleanerMemo) of(red *redact.Redactor) func(string) string {
	if m.red != red || m.clean == nil {
		m.red, m.clean = red, red.Clean
	}
	return m.clean
}

// clientLabel names a client in tags, results and the report: its name,
// else its base URL without its query (a key, or an api-version that would
// read REDACTED in every tag) and with a password redacted.
func clientLabel(opts *config.Client) string {
	if opts.Name != "" {
		return opts.Name
	}
	base, _, _ := strings.Cut(opts.BaseURL, "#")
	base, _, _ = strings.Cut(base, "?")
	return redact.CleanURL(base)
}
