package calls

// A Client as JavaScript holds it. A Go value handed to the runtime as it is
// makes a new function object (a bound method value, boxed and wrapped, its
// name and length set) at every read of one of its methods: `client.chat`
// cost that at every call, as much garbage as a call's promise. The
// object here makes each method's function once, when the Client is made,
// and hands the same one out at each read. The functions do what the
// runtime's made before (the same arguments, a returned error thrown);
// like the Go value, the object takes no properties of its own.

import (
	"slices"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
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

// callMethod is the function of a method a script calls at every call
// (chat, embed, rerank): what the runtime's reflection wrapper does (a
// missing argument is nil, a returned error thrown, two declared
// parameters), without reflection's boxed arguments at every call.
func callMethod(rt *sobek.Runtime, m func(body, params sobek.Value) (*sobek.Promise, error)) sobek.Value {
	f := rt.ToValue(func(call sobek.FunctionCall) sobek.Value {
		var body, params sobek.Value
		if len(call.Arguments) > 0 {
			body = call.Arguments[0]
		}
		if len(call.Arguments) > 1 {
			params = call.Arguments[1]
		}
		p, err := m(body, params)
		if err != nil {
			common.Throw(rt, err)
		}
		return rt.ToValue(p)
	})
	_ = f.ToObject(rt).DefineDataProperty("length", rt.ToValue(2), sobek.FLAG_FALSE, sobek.FLAG_TRUE, sobek.FLAG_FALSE)
	return f
}

// clientMethodNames are the JS names of the Client's methods, in the order
// Object.keys lists them (the Go value listed them sorted too).
var clientMethodNames = []string{"agent", "chat", "conversation", "embed", "rerank"} //nolint:gochecknoglobals // fixed table

// Object is c as a JS object, its methods' functions made once; on the event loop.
func (c *Client) Object(rt *sobek.Runtime) *sobek.Object {
	o := &clientObject{c: c, methods: make(map[string]sobek.Value, len(clientMethodNames))}
	for name, m := range clientMethods(c) {
		if f, ok := m.(func(body, params sobek.Value) (*sobek.Promise, error)); ok {
			o.methods[name] = callMethod(rt, f)
		} else {
			o.methods[name] = rt.ToValue(m)
		}
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
