package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The option objects of index.d.ts and the JS call that decodes each one. The
// probe passes one key at a time (value undefined) and checks the module does
// not call it unknown; then it passes a key nobody declares and, where the
// module's error lists the names it knows, compares that list with index.d.ts.
// So the types can neither declare an option the module rejects nor miss one
// the module accepts.
var typeProbes = []struct{ iface, call string }{ //nolint:gochecknoglobals // test table
	{"ClientOptions", "new Client(Object.assign({ baseURL: 'http://127.0.0.1:1/v1' }, O))"},
	{"Timeouts", "new Client({ baseURL: 'http://127.0.0.1:1/v1', timeouts: O })"},
	{"SLO", "new Client({ baseURL: 'http://127.0.0.1:1/v1', slo: O })"},
	{"RetryOptions", "new Client({ baseURL: 'http://127.0.0.1:1/v1', retry: O })"},
	{"Prices", "new Client({ baseURL: 'http://127.0.0.1:1/v1', prices: O })"},
	{"ReconnectOptions", "new Client({ baseURL: 'http://127.0.0.1:1/v1', protocol: 'sse', reconnect: O })"},
	{"SyntheticOptions", "Dataset.synthetic(O)"},
	{"CategorySpec", "Dataset.synthetic({ mix: { probe: 1 }, categories: { probe: Object.assign({ prompt: 20, maxTokens: 8 }, O) } })"},
	{"LoadOptions", "Dataset.load(__ENV.PROBE_DATA, O)"},
	{"ImageOptions", "Dataset.synthetic({ mix: { short: 1 }, variants: 1, images: Object.assign({ width: 8, height: 8 }, O) })"},
	{"ChunkOptions", "Dataset.chunks(Object.assign({ count: 2, tokens: 8 }, O))"},
	{"RerankOptions", "Dataset.rerank(Object.assign({ queries: 1, documents: 1 }, O))"},
	{"Bucket", "Dataset.load(__ENV.PROBE_DATA, { buckets: [Object.assign({ name: 'all' }, O)] })"},
	{"ArrivalOptions", "Arrivals.poisson(Object.assign({ rate: 1 }, O))"},
	{"ScheduleOptions", "Schedule.gamma(Object.assign({ rate: 1, duration: '1s' }, O))"},
	{"TraceOptions", "Schedule.trace(__ENV.PROBE_TRACE, O)"},
	{"CollectOptions", "collect(O)"},
}

// Probes that need a VU (chat) or handleSummary (report).
var typeProbesLate = []struct{ iface, call string }{ //nolint:gochecknoglobals // test table
	{"CallParams", "await client.chat({ messages: [] }, O)"},
	{"ReportOptions", "report(data, O)"},
	{"ConversationOptions", "client.conversation(O)"},
}

// lenientDecoders still ignore unknown names; the probe logs them instead of
// failing, and checks them strictly as soon as they reject an undeclared name.
var lenientDecoders = map[string]string{ //nolint:gochecknoglobals // test table
	"ReportOptions": "report() reads its options with sobek's ExportTo, which drops unknown names",
}

var (
	ifaceStart = regexp.MustCompile(`(?m)^  export interface (\w+) \{\n`)
	ifaceKey   = regexp.MustCompile(`(?m)^    (\w+)\??:`)
	knownList  = regexp.MustCompile(`known: ([\w, ]+)\)?`)
)

// declaredKeys reads the keys of every interface of index.d.ts.
func declaredKeys(t *testing.T) map[string][]string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "index.d.ts"))
	require.NoError(t, err)
	out := map[string][]string{}
	text := string(src)
	for _, m := range ifaceStart.FindAllStringSubmatchIndex(text, -1) {
		name := text[m[2]:m[3]]
		body := text[m[1]:]
		body = body[:strings.Index(body, "\n  }\n")+1]
		for _, k := range ifaceKey.FindAllStringSubmatch(body, -1) {
			out[name] = append(out[name], k[1])
		}
	}
	return out
}

func probeScript(t *testing.T, decl map[string][]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("import { Client, Dataset, Arrivals, Schedule, collect, report } from 'k6/x/llmstream';\n")
	b.WriteString("export const options = { iterations: 1 };\n")
	b.WriteString("function probe(iface, key, f) {\n  try { f(); return { iface, key, err: '' }; } catch (e) { return { iface, key, err: String(e) }; }\n}\n")
	b.WriteString("async function probeAsync(iface, key, f) {\n  try { await f(); return { iface, key, err: '' }; } catch (e) { return { iface, key, err: String(e) }; }\n}\n")
	b.WriteString("const early = [];\n")
	for _, p := range typeProbes {
		keys := decl[p.iface]
		require.NotEmpty(t, keys, "index.d.ts has no interface %s", p.iface)
		for _, k := range append(keys, "__undeclared") {
			fmt.Fprintf(&b, "early.push(probe(%q, %q, () => { const O = { %s: undefined }; %s; }));\n", p.iface, k, k, p.call)
		}
	}
	b.WriteString("if (__VU === 1) console.log('PROBE ' + JSON.stringify(early));\n")
	b.WriteString("const client = new Client({ baseURL: 'http://127.0.0.1:1/v1', timeouts: { connect: '200ms' } });\n")
	b.WriteString("export default async function () {\n  const late = [];\n")
	for _, k := range append(decl["CallParams"], "__undeclared") {
		fmt.Fprintf(&b, "  late.push(await probeAsync(%q, %q, async () => { const O = { %s: undefined }; %s; }));\n",
			"CallParams", k, k, typeProbesLate[0].call)
	}
	for _, k := range append(decl["ConversationOptions"], "__undeclared") {
		fmt.Fprintf(&b, "  late.push(probe(%q, %q, () => { const O = { %s: undefined }; %s; }));\n",
			"ConversationOptions", k, k, typeProbesLate[2].call)
	}
	b.WriteString("  console.log('PROBE ' + JSON.stringify(late));\n}\n")
	b.WriteString("export function handleSummary(data) {\n  const late = [];\n")
	for _, k := range append(decl["ReportOptions"], "__undeclared") {
		fmt.Fprintf(&b, "  late.push(probe(%q, %q, () => { const O = { %s: undefined }; %s; }));\n",
			"ReportOptions", k, k, typeProbesLate[1].call)
	}
	b.WriteString("  return { stdout: 'PROBE ' + JSON.stringify(late) + '\\n' };\n}\n")
	return b.String()
}

// TestTypesMatchTheModule keeps index.d.ts and the module's option decoders in
// sync (see typeProbes).
func TestTypesMatchTheModule(t *testing.T) {
	decl := declaredKeys(t)
	dir := t.TempDir()
	script := filepath.Join(dir, "probe.js")
	require.NoError(t, os.WriteFile(script, []byte(probeScript(t, decl)), 0o600))
	data := filepath.Join(dir, "probe.jsonl")
	require.NoError(t, os.WriteFile(data, []byte(`{"messages":[{"role":"user","content":"hello there"}]}`+"\n"), 0o600))

	code, out := runK6(t, script, map[string]string{"PROBE_DATA": data,
		"PROBE_TRACE": filepath.Join(repoRoot(t), "internal", "trace", "testdata", "mooncake.jsonl")}, "--log-format", "raw")
	require.Equal(t, 0, code, out)

	type result struct{ Iface, Key, Err string }
	var results []result
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "PROBE "); ok {
			var rs []result
			require.NoError(t, json.Unmarshal([]byte(rest), &rs), line)
			results = append(results, rs...)
		}
	}
	checked := map[string]bool{}
	for _, r := range results {
		checked[r.Iface] = true
		if r.Key != "__undeclared" {
			require.NotContains(t, strings.ToLower(r.Err), "unknown",
				"index.d.ts declares %s.%s but the module rejects it", r.Iface, r.Key)
			continue
		}
		if r.Err == "" && lenientDecoders[r.Iface] != "" {
			t.Logf("%s: an undeclared option is still ignored: %s", r.Iface, lenientDecoders[r.Iface])
			continue
		}
		if r.Err == "" || !strings.Contains(r.Err, "__undeclared") {
			t.Errorf("%s: an undeclared option was accepted silently (err %q): misspelt options must be errors", r.Iface, r.Err)
			continue
		}
		m := knownList.FindStringSubmatch(r.Err)
		if m == nil {
			t.Logf("%s: the module's error does not list the known options; only declared ⊆ accepted is checked", r.Iface)
			continue
		}
		known := strings.Split(strings.ReplaceAll(m[1], " ", ""), ",")
		want := append([]string(nil), decl[r.Iface]...)
		sort.Strings(known)
		sort.Strings(want)
		require.Equal(t, known, want, "%s in index.d.ts differs from the options the module knows", r.Iface)
	}
	for _, p := range append(typeProbes, typeProbesLate...) {
		require.True(t, checked[p.iface], "no probe result for %s:\n%s", p.iface, out)
	}
}

// TestTypeCheckCatchesMistakes proves `make types` is live: a script with a
// misspelt option and a wrong result field must fail tsc, naming both.
func TestTypeCheckCatchesMistakes(t *testing.T) {
	root := repoRoot(t)
	tsc := filepath.Join(root, "node_modules", ".bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Skip("TypeScript is not installed: run `make types` (npm ci) first")
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.js")
	require.NoError(t, os.WriteFile(bad, []byte(`import { Client } from 'k6/x/llmstream';
const client = new Client({ baseURL: 'http://127.0.0.1:1/v1', timeout: { total: '1m' } });
export default async function () {
  const r = await client.chat({ messages: [] });
  console.log(r.ttft_ms);
}
`), 0o600))
	cfg := map[string]any{
		"extends":         filepath.Join(root, "tsconfig.json"),
		"compilerOptions": map[string]any{"typeRoots": []string{filepath.Join(root, "node_modules", "@types")}},
		"include":         []string{filepath.Join(root, "index.d.ts"), filepath.Join(root, "types", "*.d.ts"), bad},
	}
	raw, err := json.Marshal(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "tsconfig.json"), raw, 0o600))
	cmd := exec.Command(tsc, "-p", filepath.Join(dir, "tsconfig.json"))
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "tsc accepted a wrong script:\n%s", out)
	require.Contains(t, string(out), "'timeout' does not exist", string(out))
	require.Contains(t, string(out), "'ttft_ms' does not exist", string(out))
}
