package calls

// A Client as JavaScript holds it. A Go value handed to the runtime as it is
// makes a new function object (a bound method value, boxed and wrapped, its
// name and length set) at every read of one of its methods: `client.chat`
// cost that at every call, as much garbage as a call's promise. The
// object here makes each method's function once, when the Client is made,
// and hands the same one out at each read. The functions are the ones the
// runtime made before (the same argument conversion, a returned error
// thrown); like the Go value, the object takes no properties of its own.

import (
	"slices"

	"github.com/grafana/sobek"
)

// clientObject is a Client's JS object (sobek.DynamicObject).
type clientObject struct {
	c       *Client
	methods map[string]sobek.Value
}

// clientMethods are the Client's methods scripts call, by their JS names.
func clientMethods(c *Client) map[string]any {
	return map[string]any{
		"agent": c.Agent, "chat": c.Chat, "conversation": c.Conversation, "embed": c.Embed, "rerank": c.Rerank,
	}
}

// clientMethodNames are the JS names of the Client's methods, in the order
// Object.keys lists them (the Go value listed them sorted too).
var clientMethodNames = []string{"agent", "chat", "conversation", "embed", "rerank"} //nolint:gochecknoglobals // fixed table

// Object is c as a JS object, its methods' functions made once; on the event loop.
func (c *Client) Object(rt *sobek.Runtime) *sobek.Object {
	o := &clientObject{c: c, methods: make(map[string]sobek.Value, len(clientMethodNames))}
	for name, m := range clientMethods(c) {
		o.methods[name] = rt.ToValue(m)
	}
	return rt.NewDynamicObject(o)
}

func (o *clientObject) Get(key string) sobek.Value { return o.methods[key] }

func (o *clientObject) Has(key string) bool {
	_, ok := o.methods[key]
	return ok
}

// Set and Delete refuse: a Client takes no properties of its own and keeps
// its methods (in a module's strict code the assignment throws a TypeError).
func (o *clientObject) Set(string, sobek.Value) bool { return false }
func (o *clientObject) Delete(key string) bool       { return !o.Has(key) }

func (o *clientObject) Keys() []string { return slices.Clone(clientMethodNames) }

// clientOf is the Client a script passed (exported from its JS object); ok
// is false for any other value.
func clientOf(v any) (*Client, bool) {
	switch c := v.(type) {
	case *clientObject:
		return c.c, true
	case *Client:
		return c, true
	}
	return nil, false
}
