package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Providers quote the key they refuse ("Incorrect API key provided: sk-…"),
// whole or cut short, and a network error names the URL it failed on. A
// credential set any way the client takes one must come out of the run
// redacted: from the JS results, k6's own output with --http-debug=full,
// k6's JSON output (its tags), and the report's text, JSON and HTML.

// redactTokens are one credential per way of setting it; each is what a
// server would see after any scheme.
var redactTokens = map[string]string{
	"clientAuth":  "sk-proj-e2eClientAuthorization0123456789",
	"callAuth":    "sk-proj-e2eCallAuthorization9876543210ab",
	"xApiKey":     "sk-ant-api03-e2eClientXApiKey0123456789",
	"apiKeyHdr":   "azure-e2eCallApiKeyHeader0123456789abcd",
	"goog":        "AIzaSy-e2eClientGoogApiKey0123456789abc",
	"proxy":       base64.StdEncoding.EncodeToString([]byte("proxyuser:e2e-proxy-password-0123456789")),
	"queryKey":    "AIzaSy-e2eBaseURLQueryKey0123456789abcd",
	"pathKey":     "sk-e2eCallPathApiKeyParam0123456789abcde",
	"apiKey":      "sk-proj-e2eApiKeyOption0123456789abcdef",
	"networkKey":  "AIzaSy-e2eNetworkErrorQueryKey012345678",
	"proxySecret": "e2e-proxy-password-0123456789", // Basic's password, decoded
}

const redactScript = `
import { Client, report } from 'k6/x/llmstream';

const T = JSON.parse(__ENV.TOKENS);
const base = __ENV.ECHO_URL + '/v1';
const plain = new Client({ baseURL: base, model: 'm' });
const calls = [
  ['client Authorization', new Client({ baseURL: base, model: 'm', headers: { Authorization: 'Bearer ' + T.clientAuth } }), {}],
  ['call authorization', plain, { headers: { authorization: 'Bearer ' + T.callAuth } }],
  ['client X-API-KEY', new Client({ baseURL: base, model: 'm', headers: { 'X-API-KEY': T.xApiKey } }), {}],
  ['call api-key', plain, { headers: { 'api-key': T.apiKeyHdr } }],
  ['client x-goog-api-key', new Client({ baseURL: base, model: 'm', headers: { 'x-goog-api-key': T.goog } }), {}],
  ['call Proxy-Authorization', plain, { headers: { 'Proxy-Authorization': 'Basic ' + T.proxy } }],
  ['baseURL key', new Client({ baseURL: base + '?key=' + T.queryKey, model: 'm' }), {}],
  ['call path api_key', plain, { path: '/chat/completions?api_key=' + T.pathKey }],
  ['apiKey', new Client({ baseURL: base, model: 'm', apiKey: T.apiKey }), {}],
  ['network key', new Client({ baseURL: __ENV.DEAD_URL + '/v1?key=' + T.networkKey, model: 'm' }), {}],
];

export const options = { vus: 1, iterations: 1 };

export default async function () {
  for (const [how, client, params] of calls) {
    const r = await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 }, params);
    console.log('RESULT ' + how + ' | ok=' + r.ok + ' | servedBy=' + r.servedBy + ' | type=' + r.error.type + ' | ' + r.error.message);
  }
}

export function handleSummary(data) {
  return report(data, { stdout: true, json: __ENV.RECORD, html: __ENV.HTML });
}
`

// echoServer answers every call 401 as a provider does, quoting each
// credential it got (a header's value without its scheme, a key in the
// query) whole, cut short, and in a response header; seen collects them.
func echoServer(t *testing.T) (url string, seen func() []string) {
	t.Helper()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var sent []string
		for _, h := range []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key"} {
			if v := r.Header.Get(h); v != "" {
				if _, tok, ok := strings.Cut(v, " "); ok {
					v = tok
				}
				sent = append(sent, v)
			}
		}
		for _, p := range []string{"key", "api_key"} {
			if v := r.URL.Query().Get(p); v != "" {
				sent = append(sent, v)
			}
		}
		var msg strings.Builder
		for _, tok := range sent {
			msg.WriteString("Incorrect API key provided: " + tok + " (" + tok[:8] + strings.Repeat("*", 24) + tok[len(tok)-4:] + "). ")
			if dec, err := base64.StdEncoding.DecodeString(tok); err == nil {
				msg.WriteString("Bad user:password " + string(dec) + ". ")
			}
		}
		mu.Lock()
		got = append(got, sent...)
		mu.Unlock()
		w.Header().Set("X-Echo", strings.Join(sent, ", "))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
			"message": msg.String(), "type": "invalid_request_error", "code": "invalid_api_key",
		}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// deadURL is a loopback address nothing listens on: a call to it fails
// with a network error that names its URL.
func deadURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr
}

func TestCredentialsNeverLeak(t *testing.T) {
	echo, seen := echoServer(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "redact.js")
	record, html, k6json := filepath.Join(dir, "record.json"), filepath.Join(dir, "report.html"), filepath.Join(dir, "k6.json")
	require.NoError(t, os.WriteFile(script, []byte(redactScript), 0o600))
	tokens, err := json.Marshal(redactTokens)
	require.NoError(t, err)
	_, out := runK6(t, script, map[string]string{
		"TOKENS": string(tokens), "ECHO_URL": echo, "DEAD_URL": deadURL(t), "RECORD": record, "HTML": html,
	}, "--http-debug=full", "--out", "json="+k6json)

	// The test is only worth something if every credential reached the
	// server and every call's error came back.
	got := strings.Join(seen(), " ")
	for name, tok := range redactTokens {
		if name != "networkKey" && name != "proxySecret" {
			require.Contains(t, got, tok, "the server never saw %s: the test would prove nothing about it", name)
		}
	}
	results := regexp.MustCompile(`RESULT ([^|]+) \|[^\n]*`).FindAllStringSubmatch(out, -1)
	require.Len(t, results, 10, out)
	for _, m := range results {
		line := m[0]
		require.Contains(t, line, "ok=false", line)
		if strings.HasPrefix(m[1], "network") {
			require.Contains(t, line, "type=network", line)
			require.Contains(t, line, "key=REDACTED", "the network error names the URL without its key: %s", line)
		} else {
			require.Contains(t, line, "type=http_4xx", line)
			require.Contains(t, line, "Incorrect API key provided: [REDACTED] ([REDACTED])", "the echo is redacted, not lost: %s", line)
		}
	}
	require.Contains(t, out, "Request:", "--http-debug=full printed the requests")
	require.Contains(t, out, "X-Echo", "--http-debug=full printed the responses")

	outputs := map[string]string{"k6's output": out}
	for name, path := range map[string]string{"the JSON record": record, "the HTML report": html, "k6's JSON output": k6json} {
		data, err := os.ReadFile(path) //nolint:gosec // the test's own temp file
		require.NoError(t, err, name)
		outputs[name] = string(data)
	}
	require.Contains(t, outputs["the JSON record"], "all_failed")
	for where, text := range outputs {
		for name, tok := range redactTokens {
			require.NotContains(t, text, tok, "%s: %s leaked in %s", name, tok, where)
			masked := tok[:8] + strings.Repeat("*", 24) + tok[len(tok)-4:]
			require.NotContains(t, text, masked, "%s: its cut-short echo leaked in %s", name, where)
		}
	}
}
