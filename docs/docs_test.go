// Package docs holds the tests that keep the documentation honest: every code
// block marked as runnable is the file it names, every relative link and
// anchor resolves, and every report finding has its section in the guide.
// There is no Go code to build here, only these checks over the Markdown.
package docs

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/llmstream/xk6-llmstream/internal/capacity"
	"github.com/llmstream/xk6-llmstream/internal/record"
	"github.com/llmstream/xk6-llmstream/internal/servermetrics"
)

// repo is the repository root as a file system, so the checks read paths the
// way Markdown links name them (slash-separated, relative).
func repo(t *testing.T) fs.FS {
	t.Helper()
	return os.DirFS("..")
}

// markdownFiles lists every Markdown file of the repository, skipping what
// is not documentation (git data, npm packages, test fixtures).
func markdownFiles(fsys fs.FS) ([]string, error) {
	var out []string
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "testdata":
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(p, ".md") {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// exampleMarker introduces a runnable block: `<!-- example: examples/x.js -->`
// for the whole file, or `<!-- example: examples/x.js#name -->` for the lines
// between `// #region name` and `// #endregion` in it (editors fold those).
// markerLike catches what was meant as a marker but does not parse.
var (
	exampleMarker = regexp.MustCompile(`^<!--\s*example:\s*([^\s#]+)(?:#(\S+))?\s*-->\s*$`)
	markerLike    = regexp.MustCompile(`(?i)^<!--\s*examples?\b`)
)

// runnableBlock is one marked code block of a Markdown file.
type runnableBlock struct {
	doc    string // the Markdown file
	line   int    // the marker's line, 1-based
	file   string // the example it names, relative to the repository root
	region string // "" for the whole file
	body   string // the block's content, without the fences
}

// runnableBlocks finds the marked blocks of one Markdown file. A marker must
// be followed (blank lines allowed) by a fenced block; a marker that is not,
// or a marker-like comment that does not parse, is an error, so a typo
// cannot silently switch the check off.
func runnableBlocks(doc, text string) ([]runnableBlock, error) {
	lines := strings.Split(text, "\n")
	var out []runnableBlock
	var errs []error
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		if !markerLike.MatchString(trimmed) {
			continue
		}
		m := exampleMarker.FindStringSubmatch(trimmed)
		if m == nil {
			errs = append(errs, fmt.Errorf("%s:%d: malformed example marker %q (want <!-- example: path[#region] -->)", doc, i+1, trimmed))
			continue
		}
		b := runnableBlock{doc: doc, line: i + 1, file: m[1], region: m[2]}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j == len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
			errs = append(errs, fmt.Errorf("%s:%d: example marker for %s is not followed by a code block", doc, i+1, b.file))
			continue
		}
		fence := strings.TrimSpace(lines[j])
		fence = fence[:len(fence)-len(strings.TrimLeft(fence, "`"))]
		k := j + 1
		for k < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[k]), fence) {
			k++
		}
		if k == len(lines) {
			errs = append(errs, fmt.Errorf("%s:%d: the code block after the marker never closes", doc, j+1))
			break
		}
		b.body = strings.Join(lines[j+1:k], "\n")
		out = append(out, b)
		i = k
	}
	return out, errors.Join(errs...)
}

var (
	regionStart = regexp.MustCompile(`^\s*//\s*#region\s+(\S+)\s*$`)
	regionEnd   = regexp.MustCompile(`^\s*//\s*#endregion\b`)
)

// expected is what a block must show: the whole file, or one region of it
// with its common indentation removed.
func expected(fsys fs.FS, b runnableBlock) (string, error) {
	data, err := fs.ReadFile(fsys, b.file)
	if err != nil {
		return "", fmt.Errorf("%s:%d: names %s: %w", b.doc, b.line, b.file, err)
	}
	text := strings.TrimRight(string(data), "\n")
	if b.region == "" {
		return text, nil
	}
	var region []string
	in, found := false, false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case !in && regionStart.MatchString(l) && regionStart.FindStringSubmatch(l)[1] == b.region:
			in, found = true, true
		case in && regionEnd.MatchString(l):
			in = false
		case in:
			region = append(region, l)
		}
	}
	if !found {
		return "", fmt.Errorf("%s:%d: %s has no region %q (// #region %s … // #endregion)", b.doc, b.line, b.file, b.region, b.region)
	}
	if in {
		return "", fmt.Errorf("%s:%d: region %q of %s never ends", b.doc, b.line, b.region, b.file)
	}
	return dedent(region), nil
}

func dedent(lines []string) string {
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		}
		out[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n")
}

// checkRunnable returns one error per marked block that differs from its file.
func checkRunnable(fsys fs.FS, docs []string) (int, error) {
	var errs []error
	n := 0
	for _, doc := range docs {
		data, err := fs.ReadFile(fsys, doc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		blocks, err := runnableBlocks(doc, string(data))
		errs = append(errs, err)
		for _, b := range blocks {
			n++
			want, err := expected(fsys, b)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if got := strings.TrimRight(b.body, "\n"); got != want {
				errs = append(errs, fmt.Errorf("%s:%d: the block differs from %s%s at its line %d; copy the file into the block again",
					b.doc, b.line, b.file, regionSuffix(b.region), firstDiff(got, want)))
			}
		}
	}
	return n, errors.Join(errs...)
}

// rewriteBlocks replaces the body of every marked block of one Markdown file
// (read from fsys as doc, written to file) with what its file says.
func rewriteBlocks(fsys fs.FS, file, doc string) error {
	data, err := fs.ReadFile(fsys, doc)
	if err != nil {
		return err
	}
	blocks, err := runnableBlocks(doc, string(data))
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	// From the last block up, so earlier line numbers stay valid.
	for i := len(blocks) - 1; i >= 0; i-- {
		b := blocks[i]
		want, err := expected(fsys, b)
		if err != nil {
			return err
		}
		open := b.line // the marker's index is line-1; find the fence after it
		for strings.TrimSpace(lines[open]) == "" {
			open++
		}
		n := strings.Count(b.body, "\n") + 1
		if b.body == "" {
			n = 0
		}
		repl := append([]string{}, lines[:open+1]...)
		repl = append(repl, strings.Split(want, "\n")...)
		lines = append(repl, lines[open+1+n:]...)
	}
	return os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o600)
}

func regionSuffix(r string) string {
	if r == "" {
		return ""
	}
	return "#" + r
}

func firstDiff(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// update rewrites the marked blocks from their files instead of failing:
// `go test ./docs -run TestRunnable -update` after editing an example.
var update = flag.Bool("update", false, "rewrite every marked code block from the file it names")

func TestRunnableBlocksMatchTheirFiles(t *testing.T) {
	fsys := repo(t)
	docs, err := markdownFiles(fsys)
	require.NoError(t, err)
	if *update {
		for _, doc := range docs {
			require.NoError(t, rewriteBlocks(fsys, path.Join("..", doc), doc))
		}
	}
	n, err := checkRunnable(fsys, docs)
	require.NoError(t, err)
	require.Positive(t, n, "no runnable block found: the markers are gone or no longer recognised")
}

func TestRunnableBlockCheckFailsOnDrift(t *testing.T) {
	file := "import x from 'k6';\n// #region body\n  export default function () {\n    x();\n  }\n// #endregion\n"
	block := func(marker, body string) string {
		return "text\n\n" + marker + "\n```js\n" + body + "\n```\n"
	}
	cases := []struct {
		name, doc, wantErr string
	}{
		{"whole file", block("<!-- example: ex.js -->", strings.TrimRight(file, "\n")), ""},
		{"region dedented", block("<!-- example: ex.js#body -->", "export default function () {\n  x();\n}"), ""},
		{"drifted file", block("<!-- example: ex.js -->", "import x from 'k6';"), "differs from ex.js"},
		{"drifted region", block("<!-- example: ex.js#body -->", "export default function () {\n  y();\n}"), "differs from ex.js#body at its line 2"},
		{"missing file", block("<!-- example: gone.js -->", "x"), "names gone.js"},
		{"missing region", block("<!-- example: ex.js#nope -->", "x"), `no region "nope"`},
		{"no block", "<!-- example: ex.js -->\ntext\n", "not followed by a code block"},
		{"typo", block("<!-- example examples/ex.js -->", "x"), "malformed example marker"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := fstest.MapFS{"ex.js": {Data: []byte(file)}, "d.md": {Data: []byte(c.doc)}}
			_, err := checkRunnable(fsys, []string{"d.md"})
			if c.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.wantErr)
		})
	}
}

// link finds Markdown links and images: [text](target) and ![alt](target).
var link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

var htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)

// headingAnchors computes the anchors GitHub gives a Markdown file's
// headings (lower case, punctuation dropped, spaces to hyphens, -1, -2 on
// repeats) plus explicit <a id="…"> anchors.
func headingAnchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	inFence := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inFence = !inFence
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
		if inFence || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// checkLinks returns one error per relative link whose file or anchor does
// not exist. Links inside code blocks and inline code are not links.
func checkLinks(fsys fs.FS, docs []string) error {
	var errs []error
	anchors := map[string]map[string]bool{}
	anchorsOf := func(p string) (map[string]bool, error) {
		if a, ok := anchors[p]; ok {
			return a, nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		anchors[p] = headingAnchors(string(data))
		return anchors[p], nil
	}
	inlineCode := regexp.MustCompile("`[^`]*`")
	for _, doc := range docs {
		data, err := fs.ReadFile(fsys, doc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		inFence := false
		for i, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inFence = !inFence
				continue
			}
			if inFence {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(inlineCode.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				p := doc
				if file != "" {
					p = path.Clean(path.Join(path.Dir(doc), file))
					if _, err := fs.Stat(fsys, strings.TrimSuffix(p, "/")); err != nil {
						errs = append(errs, fmt.Errorf("%s:%d: link to %s: no such file", doc, i+1, target))
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(p, ".md") {
					continue
				}
				a, err := anchorsOf(p)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if !a[anchor] {
					errs = append(errs, fmt.Errorf("%s:%d: link to %s: %s has no anchor %q", doc, i+1, target, p, anchor))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func TestRelativeLinksResolve(t *testing.T) {
	fsys := repo(t)
	docs, err := markdownFiles(fsys)
	require.NoError(t, err)
	require.NoError(t, checkLinks(fsys, docs))
}

func TestLinkCheckFailsOnBrokenLinks(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md":   {Data: []byte("# Title\n\nSee [a](docs/a.md#the-clock-t0), [b](docs/a.md#why), [c](docs/gone.md), `[d](nowhere.md)`, [e](#title), [f](#nope).\n")},
		"docs/a.md":   {Data: []byte("# The clock (t0)\n\n<a id=\"why\"></a>\n```md\n# Not a heading\n```\n[back](../README.md)\n")},
		"docs/ok.txt": {Data: []byte("x")},
	}
	err := checkLinks(fsys, []string{"README.md", "docs/a.md"})
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, "link to docs/gone.md: no such file")
	require.Contains(t, msg, `has no anchor "nope"`)
	require.NotContains(t, msg, "the-clock-t0")
	require.NotContains(t, msg, "#why")
	require.NotContains(t, msg, "nowhere.md")
	require.NotContains(t, msg, "#title")
}

// findingIDs collects the id of every report finding from the source of
// internal/report: the string (or string constant) given as ID in a Finding
// literal, typed or elided inside a []Finding. Reading the source rather than
// running the rules finds every id, including those only a rare run produces.
func findingIDs(dir string) ([]string, error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	consts := map[string]string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path.Join(dir, name), nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[n.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
		}
	}
	seen := map[string]bool{}
	var ids []string
	var errs []error
	idOf := func(lit *ast.CompositeLit) {
		for _, el := range lit.Elts {
			kv, ok := el.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			if k, ok := kv.Key.(*ast.Ident); !ok || k.Name != "ID" {
				continue
			}
			var id string
			switch v := kv.Value.(type) {
			case *ast.BasicLit:
				id, _ = strconv.Unquote(v.Value)
			case *ast.Ident:
				id = consts[v.Name]
			}
			if id == "" {
				errs = append(errs, fmt.Errorf("%s: a finding id that is not a string literal or constant", fset.Position(kv.Pos())))
				continue
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	isFinding := func(e ast.Expr) bool {
		if sel, ok := e.(*ast.SelectorExpr); ok { // runrecord.Finding
			e = sel.Sel
		}
		id, ok := e.(*ast.Ident)
		return ok && id.Name == "Finding"
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			switch t := lit.Type.(type) {
			case *ast.Ident, *ast.SelectorExpr:
				if isFinding(t) {
					idOf(lit)
				}
			case *ast.ArrayType:
				if isFinding(t.Elt) {
					for _, el := range lit.Elts {
						if inner, ok := el.(*ast.CompositeLit); ok && inner.Type == nil {
							idOf(inner)
						}
					}
				}
			}
			return true
		})
	}
	return ids, errors.Join(errs...)
}

// TestEveryFindingHasAGuideSection: a finding's advice ends with a link to
// docs/guide.md#<id>, so each id needs an anchor of exactly that name there.
func TestEveryFindingHasAGuideSection(t *testing.T) {
	ids, err := findingIDs("../internal/report")
	require.NoError(t, err)
	// The rules the report has had from the start; more may come, none may vanish unnoticed.
	for _, want := range []string{"queue_bound", "knee", "gateway_buffering", "stalls", "client_bound", "cache_busted",
		"decode_saturated", "drift", "head_of_line", "network_heavy", "length_variance"} {
		require.Contains(t, ids, want, "finding ids parsed from internal/report")
	}
	guide, err := os.ReadFile("guide.md")
	require.NoError(t, err)
	anchors := map[string]bool{}
	for _, m := range htmlAnchor.FindAllStringSubmatch(string(guide), -1) {
		anchors[m[1]] = true
	}
	for _, id := range ids {
		require.Truef(t, anchors[id], `docs/guide.md has no <a id=%q></a> for the report finding %q`, id, id)
		require.Containsf(t, string(guide), "(#"+id+")", "the guide's table of findings does not link %q", id)
	}
}

func TestFindingIDsAreReadFromTheSource(t *testing.T) {
	dir := t.TempDir()
	src := `package report
const idNew = "new_rule"
type Finding struct{ ID, Title string }
func a() []Finding { return []Finding{{ID: "lit_rule", Title: "x"}} }
func b() Finding { return Finding{Title: "y", ID: idNew} }
type chart struct{ ID string }
var c = chart{ID: "not-a-finding"}
`
	require.NoError(t, os.WriteFile(path.Join(dir, "r.go"), []byte(src), 0o600))
	require.NoError(t, os.WriteFile(path.Join(dir, "r_test.go"), []byte("package report\nvar _ = Finding{ID: \"test_only\"}\n"), 0o600))
	ids, err := findingIDs(dir)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"lit_rule", "new_rule"}, ids)
}

// metricName is an llm_* metric name, as registered or as written in the docs.
var metricName = regexp.MustCompile(`\bllm_[a-z0-9_]+`)

// registeredMetrics are the llm_* names the module registers: the metrics
// of internal/record's figure tables (chat's, the embed and rerank calls'
// and a job's).
func registeredMetrics(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, table := range [][]record.Figure[record.Call]{record.Figures, record.RetrievalFigures} {
		for _, f := range table {
			if f.Metric != "" {
				out[f.Metric] = true
			}
		}
	}
	for _, f := range record.JobFigures { // a conversation's or agent job's
		if f.Metric != "" {
			out[f.Metric] = true
		}
	}
	for _, m := range servermetrics.Metrics { // serverMetrics: registered beside the figures
		out[m.Name] = true
	}
	out[capacity.Metric] = true // Capacity.search's answer
	return out
}

// TestMetricsPageListsEveryMetric: docs/metrics.md names every registered
// metric, and no metric the module does not register.
func TestMetricsPageListsEveryMetric(t *testing.T) {
	registered := registeredMetrics(t)
	require.NotEmpty(t, registered)
	page, err := os.ReadFile("metrics.md")
	require.NoError(t, err)
	documented := map[string]bool{}
	for _, code := range regexp.MustCompile("`[^`]*`").FindAllString(string(page), -1) {
		for _, m := range metricName.FindAllString(code, -1) {
			documented[m] = true
		}
	}
	for m := range registered {
		require.Truef(t, documented[m], "docs/metrics.md does not document %s", m)
	}
	for m := range documented {
		require.Truef(t, registered[m], "docs/metrics.md documents %s, which internal/record's figure table does not have", m)
	}
}

// optionPages says which page documents each option interface of index.d.ts.
var optionPages = map[string]string{ //nolint:gochecknoglobals // test table
	"ClientOptions": "client.md", "CallParams": "client.md", "Timeouts": "client.md", "SLO": "client.md",
	"RetryOptions": "client.md", "ReconnectOptions": "client.md",
	"SyntheticOptions": "datasets.md", "LoadOptions": "datasets.md", "ArrivalOptions": "datasets.md",
	"ReportOptions": "report.md", "CollectOptions": "report.md",
	// What calls and datasets give back.
	"ChatResultFields": "client.md", "Usage": "client.md", "ToolCall": "client.md", "ChatError": "client.md",
	"StreamEvent": "client.md", "DatasetItem": "datasets.md", "DatasetInfo": "datasets.md", "CategoryInfo": "datasets.md",
	"ImageOptions": "datasets.md", "DatasetImage": "datasets.md", "ChunkOptions": "datasets.md", "ChunkBatch": "datasets.md",
	"RerankOptions": "datasets.md", "RerankQuery": "datasets.md",
	"ScheduleOptions": "schedule.md", "TraceOptions": "schedule.md", "Credit": "schedule.md",
	"ScheduleStats": "schedule.md", "TraceInfo": "schedule.md",
	"ServerMetricsOptions": "client.md",
	"AgentLoopOptions":     "client.md", "AgentTool": "client.md", "AgentJobFields": "client.md", "AgentFinding": "client.md",
}

var (
	dtsInterface = regexp.MustCompile(`(?ms)^  export interface (\w+) \{\n(.*?)^  \}`)
	dtsKey       = regexp.MustCompile(`(?m)^    (\w+)\??:`)
)

// TestEveryOptionIsDocumented: each key of the option and result interfaces
// in index.d.ts (which an e2e probe keeps equal to what the module accepts) is
// named in code on its manual page.
func TestEveryOptionIsDocumented(t *testing.T) {
	dts, err := os.ReadFile("../index.d.ts")
	require.NoError(t, err)
	found := map[string]bool{}
	for _, m := range dtsInterface.FindAllStringSubmatch(string(dts), -1) {
		page, ok := optionPages[m[1]]
		if !ok {
			continue
		}
		found[m[1]] = true
		doc, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, k := range dtsKey.FindAllStringSubmatch(m[2], -1) {
			named := regexp.MustCompile("`[^`]*\\b" + k[1] + "\\b[^`]*`").Match(doc)
			require.Truef(t, named, "docs/%s does not name the %s option %q", page, m[1], k[1])
		}
	}
	for iface := range optionPages {
		require.Truef(t, found[iface], "index.d.ts has no interface %s any more: update optionPages", iface)
	}
}

// TestDesignNamesEveryRecordMetric: the run record's distributions are the
// figure table's rows that keep one (record.Dists); docs/design.md lists
// them all.
func TestDesignNamesEveryRecordMetric(t *testing.T) {
	require.NotEmpty(t, record.Dists)
	design, err := os.ReadFile("design.md")
	require.NoError(t, err)
	for _, d := range record.Dists {
		require.Truef(t, strings.Contains(string(design), "`"+d.String()+"`"), "docs/design.md's run record does not list the distribution %q", d)
	}
}

// TestDesignNamesEveryFileAndPackage: the design note's tables name every
// file of the root package, every package of the binding and every internal
// package, so a new one gets its one-line idea there.
func TestDesignNamesEveryFileAndPackage(t *testing.T) {
	design, err := os.ReadFile("design.md")
	require.NoError(t, err)
	root, err := os.ReadDir("..")
	require.NoError(t, err)
	for _, e := range root {
		if n := e.Name(); strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			require.Containsf(t, string(design), "`"+n+"`", "docs/design.md does not place the root file %s", n)
		}
	}
	for _, dir := range []string{"binding", "internal"} {
		pkgs, err := os.ReadDir("../" + dir)
		require.NoError(t, err)
		for _, e := range pkgs {
			if e.IsDir() {
				require.Containsf(t, string(design), "`"+dir+"/"+e.Name()+"`", "docs/design.md does not describe %s/%s", dir, e.Name())
			}
		}
	}
}

// TestReadmeLinksEveryManual: the front page is where a reader starts, so it
// links every page of docs/ (and llm-sim's).
func TestReadmeLinksEveryManual(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	require.NoError(t, err)
	pages, err := fs.Glob(os.DirFS("."), "*.md")
	require.NoError(t, err)
	for _, p := range append(pages, "../cmd/llm-sim/README.md") {
		target := path.Join("docs", p) // as the README, at the root, links it
		require.Containsf(t, string(readme), "]("+target, "README.md does not link %s", target)
	}
}
