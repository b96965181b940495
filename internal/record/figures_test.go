package record

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEveryRowSaysWhatItIs: a row a reader sees (a JS key, a k6 metric or a
// distribution) has its one line of help.
func TestEveryRowSaysWhatItIs(t *testing.T) {
	check := func(name, help string) {
		require.NotEmptyf(t, help, "the row %s has no Help", name)
		require.NotContainsf(t, help, "\n", "the row %s's Help is one line", name)
	}
	for _, f := range Figures {
		check(f.Key+f.Metric+string(f.Keep.Dist), f.Help)
	}
	for _, f := range RetrievalFigures {
		check(f.Key+f.Metric, f.Help)
	}
	for _, f := range JobFigures {
		check(f.Key+f.Metric, f.Help)
	}
}

// TestEveryDistConstantHasItsRow: a constant the report reads a
// distribution by is kept by exactly one row (Dist.Row panics otherwise), and
// every distribution's values are one per call unless it says PerEvent.
func TestEveryDistConstantHasItsRow(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "keep.go", nil, 0)
	require.NoError(t, err)
	var names []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Type == nil || len(vs.Values) != 1 {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "Dist" {
			s, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
			require.NoError(t, err)
			names = append(names, s)
		}
		return true
	})
	require.NotEmpty(t, names, "no Dist constant found in keep.go")
	for _, n := range names {
		d, ok := DistByName(n)
		require.Truef(t, ok, "no row keeps the distribution %q", n)
		require.Equal(t, n, d.Row().Keep.Dist.String())
		require.Equal(t, d, Dists[d.Index()])
	}
	for _, d := range Dists {
		r := d.Row()
		require.Equalf(t, r.Keep.PerEvent, r.kept == nil, "%s: a distribution is read one value per call (Kept) unless it is PerEvent", d)
		require.Falsef(t, strings.ContainsAny(string(d), "ABCDEFGHIJKLMNOPQRSTUVWXYZ -"), "%s: a record key is snake_case", d)
	}
}
