package module

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReportOptionsInJS(t *testing.T) {
	t.Parallel()
	vu := newTestVU(t, ``)

	// A misspelt option is an error that names it, not a silently missing file.
	_, err := vu.rt.RunOnEventLoop(`llm.report(undefined, {htm: 'report.html'})`)
	require.ErrorContains(t, err, `report options: unknown option "htm" (did you mean "html"?); known: html, json, `+
		`baseline, title, meta, stdout`)
	_, err = vu.rt.RunOnEventLoop(`llm.report(undefined, {stdout: 'no'})`)
	require.ErrorContains(t, err, `report options: stdout must be true or false, got "no"`)
	_, err = vu.rt.RunOnEventLoop(`llm.report(undefined, 'report.html')`)
	require.ErrorContains(t, err, `report options must be an object, got "report.html"`)

	out := vu.run(`llm.report(undefined, {stdout: false, json: 'run.json', title: null, meta: {build: 7}})`).
		Export().(map[string]any) //nolint:forcetypeassert
	require.NotContains(t, out, "stdout")
	require.Contains(t, out["run.json"], `"build": 7`)

	for _, call := range []string{"llm.report()", "llm.report(undefined, null)", "llm.report(undefined, undefined)",
		"llm.report(undefined, {})", "llm.report(undefined, {stdout: null})"} {
		out := vu.run(call).Export().(map[string]any) //nolint:forcetypeassert
		require.Contains(t, out, "stdout", "%s prints by default", call)
	}
}
