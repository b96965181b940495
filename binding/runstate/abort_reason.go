package runstate

// test.abort()'s message, read once at the test's end from where k6 keeps
// it: the reason of the test run's abort controller, a value of k6's run
// context (go.k6.io/k6/internal/execution, which an extension cannot
// import). The key it is kept under is found by reflection in a VU's
// context (its init context descends from the run context), once per
// process; the controller is then read with the context's own Value. This
// replaces a subscription to every VU's iteration ends, which k6 waited on
// at each iteration of each VU only for this message. When a k6 build keeps
// it elsewhere, the key is not found and the subscription is the way.

import (
	"context"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"go.k6.io/k6/errext"
)

// Where k6 keeps the test run's abort controller.
const (
	abortKeyPkg  = "go.k6.io/k6/internal/execution"
	abortKeyName = "testAbortKey"
)

// maxContextDepth bounds the walk up a context's parents.
const maxContextDepth = 64

// abortReader reads the test run's abort reason from a context that
// carries k6's abort controller.
type abortReader struct {
	// keyPkg and keyName name the key's type ("": k6's, abortKeyPkg and
	// abortKeyName).
	keyPkg, keyName string

	mu  sync.Mutex
	ctx context.Context // a context under the run context (nil: none found yet)
	key any             // k6's key of the abort controller
}

// watch keeps ctx when it carries k6's abort controller; true when one
// carried it (this one or an earlier one).
func (a *abortReader) watch(ctx context.Context) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ctx != nil {
		return true
	}
	if ctx == nil {
		return false
	}
	pkg, name := a.keyPkg, a.keyName
	if pkg == "" {
		pkg, name = abortKeyPkg, abortKeyName
	}
	t, ok := keyType(ctx, pkg, name)
	if !ok {
		return false
	}
	key := reflect.Zero(t).Interface()
	if ctx.Value(key) == nil {
		return false
	}
	a.ctx, a.key = ctx, key
	return true
}

// message is test.abort()'s message when the run was aborted by it (ok
// false otherwise, or without a watched context). Read once the run has
// ended: k6 sets the reason under its own lock before it cancels the run,
// and the run's end comes after.
func (a *abortReader) message() (msg string, ok bool) {
	var ie *errext.InterruptError
	if !errors.As(a.reason(), &ie) {
		return "", false
	}
	return abortTestMessage(ie.Reason)
}

// signalReason is how k6 words the abort a SIGINT or SIGTERM makes ("test
// run was aborted because k6 received a 'interrupt' signal", in v1 and v2),
// the signal as Go names it.
var signalReason = regexp.MustCompile(`received a '([^']+)' signal`)

// signal is the signal k6 stopped the run for ("SIGINT", "SIGTERM"), read
// from the run's abort reason: aborted by the user, in the words of k6's
// signal handler (the REST API's stop is the user's too, in other words).
// Go hands a signal to k6's listener and to this process's own in one pass,
// but a busy machine can hold that thread between the two sends for as long
// as k6 takes to end the test: then the reason is there and the signal not.
func (a *abortReader) signal() (string, bool) {
	err := a.reason()
	var byUser errext.HasAbortReason
	if !errors.As(err, &byUser) || byUser.AbortReason() != errext.AbortedByUser {
		return "", false
	}
	m := signalReason.FindStringSubmatch(err.Error())
	if m == nil {
		return "", false
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if m[1] == sig.String() {
			return signalName(sig), true
		}
	}
	return m[1], true
}

// reason is the error the run's abort controller holds: nil when the run
// was not aborted, or without a watched context.
func (a *abortReader) reason() error {
	a.mu.Lock()
	ctx, key := a.ctx, a.key
	a.mu.Unlock()
	if ctx == nil {
		return nil
	}
	return controllerReason(ctx.Value(key))
}

// controllerReason is the reason of a controller: a pointer to a struct
// with a reason error field, unexported (k6's), so read through its address.
func controllerReason(controller any) error {
	v := reflect.ValueOf(controller)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	r := v.Elem().FieldByName("reason")
	if !r.IsValid() || r.Type() != reflect.TypeFor[error]() || r.IsNil() {
		return nil
	}
	err, _ := reflect.NewAt(r.Type(), unsafe.Pointer(r.UnsafeAddr())).Elem().Interface().(error) // #nosec G103 -- k6's field, of the type checked above
	return err
}

// abortTestMessage is the message of an interrupt error's reason when
// test.abort() gave it ("test aborted: <message>"), false for any other
// interruption.
func abortTestMessage(reason string) (string, bool) {
	if !strings.HasPrefix(reason, errext.AbortTest) {
		return "", false
	}
	msg := strings.TrimPrefix(reason, errext.AbortTest)
	return strings.TrimSpace(strings.TrimPrefix(msg, ":")), true
}

// keyType is the type named pkg.name among the keys of the values of ctx
// and its parents.
func keyType(ctx context.Context, pkg, name string) (reflect.Type, bool) {
	v := reflect.ValueOf(ctx)
	for range maxContextDepth {
		for v.Kind() == reflect.Interface || v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return nil, false
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return nil, false
		}
		if k := v.FieldByName("key"); k.IsValid() && k.Kind() == reflect.Interface && !k.IsNil() {
			if t := k.Elem().Type(); t.PkgPath() == pkg && t.Name() == name {
				return t, true
			}
		}
		if v = parentContext(v); !v.IsValid() {
			return nil, false
		}
	}
	return nil, false
}

// parentContext is the parent of a context struct: its (possibly promoted)
// Context field, or the c of a context.WithoutCancel.
func parentContext(v reflect.Value) reflect.Value {
	if f := v.FieldByName("Context"); f.IsValid() {
		return f
	}
	return v.FieldByName("c")
}
