package record

import "sync"

// A call's JS result one key at a time, for a result read on access (the
// binding's): a script reads a field or two of a result of some forty, and
// building them all is a share of a short call's CPU and garbage. The
// values are the ones JS() puts in its object.

// jsKeys is a figure table's JS keys, in the table's order, and the row of
// each (the last row, as in JS's object, were a key on two).
type jsKeys struct {
	keys []string
	row  map[string]int
}

func indexJSKeys(table []Figure[Call]) *jsKeys {
	ix := &jsKeys{row: map[string]int{}}
	for i := range table {
		if k := table[i].Key; k != "" {
			if _, dup := ix.row[k]; !dup {
				ix.keys = append(ix.keys, k)
			}
			ix.row[k] = i
		}
	}
	return ix
}

//nolint:gochecknoglobals // indexes of the read-only tables, made once
var (
	callJSKeys      = sync.OnceValue(func() *jsKeys { return indexJSKeys(Figures) })
	retrievalJSKeys = sync.OnceValue(func() *jsKeys { return indexJSKeys(RetrievalFigures) })
)

func (c *Call) jsKeys() *jsKeys {
	if c.Retrieval != nil {
		return retrievalJSKeys()
	}
	return callJSKeys()
}

// JSKeys are the keys of the call's JS result, in the table's order. The
// slice is shared: read it, do not change it.
func (c *Call) JSKeys() []string { return c.jsKeys().keys }

// JSValue is the value of one key of the call's JS result; false for a key
// it does not have.
func (c *Call) JSValue(key string) (any, bool) {
	i, ok := c.jsKeys().row[key]
	if !ok {
		return nil, false
	}
	return c.Table()[i].JS(c), true
}

// HasJSKey says whether the call's JS result has the key.
func (c *Call) HasJSKey(key string) bool {
	_, ok := c.jsKeys().row[key]
	return ok
}
