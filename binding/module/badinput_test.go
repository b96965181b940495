package module

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.k6.io/k6/js/modulestest"
)

// Bad input found by writing scripts the way users do: each is a clear error
// that names the option, never a silent default.

// A fallbackOn with nothing to fall back to, or a retry without attempts, is
// a script that does not do what its author thinks.
func TestFallbackOnWithoutAFallbackIsAnError(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]string{
		`new llm.Client({baseURL: 'http://x', fallbackOn: ['http_5xx']})`:  "fallbackOn needs a fallback",
		`new llm.Client({baseURL: 'http://x', retry: {on: ['http_5xx']}})`: "retry.attempts is required",
	} {
		rt := modulestest.NewRuntime(t)
		require.NoError(t, rt.SetupModuleSystem(map[string]any{ImportPath: New()}, nil, nil))
		_, err := rt.VU.Runtime().RunString(`const llm = require('k6/x/llmstream');` + code)
		require.ErrorContains(t, err, want, code)
	}
}

// onEvent that is not a function would silently get no callbacks.
func TestOnEventMustBeAFunction(t *testing.T) {
	t.Parallel()
	vu := newTestVU(t, `const client = new llm.Client({baseURL: 'http://127.0.0.1:1'});`)
	_, err := vu.rt.RunOnEventLoop(`client.chat({messages: []}, {onEvent: 'log'})`)
	require.ErrorContains(t, err, "chat params: onEvent must be a function")
}

// draw(n) keyed on a misspelt exec field gets undefined: every call would
// send item 0. A draw or item number must be a whole number, given.
func TestDrawAndAtNeedAWholeNumber(t *testing.T) {
	t.Parallel()
	vu := newDatasetVU(t, New(), nil, `const d = llm.Dataset.synthetic({seed: 1});`)
	for code, want := range map[string]string{
		`d.draw()`:          "draw(n): n must be a whole number",
		`d.draw(undefined)`: "draw(n): n must be a whole number",
		`d.draw('x')`:       `draw(n): n must be a whole number, not negative, got "x"`,
		`d.draw(1.5)`:       "draw(n): n must be a whole number, not negative, got 1.5",
		`d.draw(-1)`:        "draw(n): n must be a whole number, not negative, got -1",
		`d.at()`:            "at(i): i must be a whole number",
		`d.at(2.5)`:         "at(i): i must be a whole number, not negative, got 2.5",
	} {
		_, err := vu.rt.RunOnEventLoop(code)
		require.ErrorContains(t, err, want, code)
	}
	require.Equal(t, vu.run(`d.draw(3).id`).String(), vu.run(`d.draw(3.0).id`).String())
}
