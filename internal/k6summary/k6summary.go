// Package k6summary carries k6's own end-of-test text summary (the JavaScript
// that k6 v1.8.1 embeds as internal/js/summary-legacy.js, AGPL-3.0 like this
// project, copied unchanged). k6 does not expose it to handleSummary, so a
// report that adds an LLM section would otherwise have to drop k6's summary.
package k6summary

import _ "embed"

// Code is the CommonJS source: it sets exports.textSummary(data, options).
//
//go:embed k6-summary-legacy.js
var Code string
