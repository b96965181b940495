package docs

// The root package's files use one another one way only: docs/design.md
// lists them top-down, and each may use only the files after it. This test
// reads which file uses which from the code itself and fails on a use that
// reaches back up the list (and so on any loop between files).

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// designFileOrder is each root file's place in docs/design.md's table of
// the root package's files, top-down (files of one row in their row's order).
func designFileOrder(t *testing.T) map[string]int {
	t.Helper()
	section := between(t, readText(t, "docs/design.md"), "| file | one idea |", "One call, step by step")
	order := map[string]int{}
	file := regexp.MustCompile("`([a-z0-9_]+\\.go)`")
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range file.FindAllStringSubmatch(cells[1], -1) {
			if _, seen := order[m[1]]; !seen {
				order[m[1]] = len(order)
			}
		}
	}
	return order
}

// emptyImporter stands in for every import: only the root package's own
// names matter here, so its imports are left empty and what refers into
// them is left unresolved (the type checker's errors about them are
// ignored). A use of the package's own function, type, variable, constant
// or method still resolves to the file that defines it.
type emptyImporter struct{}

func (emptyImporter) Import(path string) (*types.Package, error) {
	pkg := types.NewPackage(path, filepath.Base(path))
	pkg.MarkComplete()
	return pkg, nil
}

// fileUses are the root package's uses of its own names from one file into
// another: "from.go -> to.go" to the names used.
func fileUses(t *testing.T) map[[2]string][]string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("../*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: emptyImporter{}, Error: func(error) {}}
	pkg, _ := conf.Check("llmstream", fset, files, info) // errors: the empty imports
	fileOf := func(p token.Pos) string { return filepath.Base(fset.Position(p).Filename) }
	uses := map[[2]string][]string{}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !ownName(pkg, obj) {
			continue
		}
		from, to := fileOf(id.Pos()), fileOf(obj.Pos())
		if pair := [2]string{from, to}; from != to && !slices.Contains(uses[pair], obj.Name()) {
			uses[pair] = append(uses[pair], obj.Name())
		}
	}
	return uses
}

// ownName tells a name a file defines for others (a package-level function,
// type, variable or constant, or a method) from a local one or a field.
func ownName(pkg *types.Package, obj types.Object) bool {
	if fn, ok := obj.(*types.Func); ok {
		if sig, ok := fn.Type().(*types.Signature); ok && sig.Recv() != nil {
			return true
		}
	}
	return obj.Parent() == pkg.Scope()
}

func TestRootFilesUseOnlyTheFilesAfterThem(t *testing.T) {
	order := designFileOrder(t)
	uses := fileUses(t)
	require.NotEmpty(t, uses, "no use between the root files was read")
	for pair, names := range uses {
		from, to := pair[0], pair[1]
		fromAt, ok := order[from]
		require.Truef(t, ok, "docs/design.md does not place %s", from)
		toAt, ok := order[to]
		require.Truef(t, ok, "docs/design.md does not place %s", to)
		if fromAt > toAt {
			t.Errorf("%s uses %s of %s, which docs/design.md lists above it: a use reaches back up "+
				"(move what both need below both, or list the files in the order they use one another)",
				from, strings.Join(names, ", "), to)
		}
	}
}

// The reading above sees the uses it checks: two known ones.
func TestRootFileUsesAreRead(t *testing.T) {
	uses := fileUses(t)
	require.Contains(t, uses, [2]string{"chat.go", "plan.go"}, "chat() builds its plan with plan.go's (*Client).plan")
	require.Contains(t, uses, [2]string{"fanout.go", "samples.go"}, "a call's samples are built by samples.go")
}
