package calls

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every exported method of a Client scripts could call on the Go value is
// on its JS object, under the name the runtime gave it (the first letter
// lowered), and Object.keys lists exactly those. Object makes the JS
// object and is not one of them.
func TestClientObjectHasEveryMethod(t *testing.T) {
	t.Parallel()
	typ := reflect.TypeFor[*Client]()
	var want []string
	for i := range typ.NumMethod() {
		name := typ.Method(i).Name
		if name == "Object" {
			continue
		}
		want = append(want, strings.ToLower(name[:1])+name[1:])
	}
	slices.Sort(want)
	require.Equal(t, want, slices.Sorted(maps.Keys(clientMethods(&Client{}))))
	require.Equal(t, want, clientMethodNames)
}
