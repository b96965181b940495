// Package llmstream is the k6 extension k6/x/llmstream: a streaming LLM client
// whose per-event timing happens in Go, at byte arrival, and turns every answer
// into k6 metrics, plus dataset helpers and a report.
//
// This package only registers the module with k6 when it is imported (k6's
// build imports it for that side effect, as cmd/k6 does). The binding lives in
// binding/, in packages the compiler keeps in one-way order (binding/module
// is the top; docs/design.md draws them and follows one call through their
// files), over k6-free engines in internal/.
package llmstream

import (
	"go.k6.io/k6/js/modules"

	"github.com/llmstream/xk6-llmstream/binding/module"
)

// register runs when the package is imported: the module registers itself
// with k6 then, as every k6 extension does.
var _ = register()

func register() bool {
	modules.Register(module.ImportPath, module.New())
	return true
}
