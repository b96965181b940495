// Package precision decides when a run knows enough: each target is a
// percentile of a call figure and the margin it must be known to
// ("p95±5%", "p99±20ms"), and the gate is met once every target's
// distribution-free 95 % interval (internal/quantile) lies within its margin
// of the estimate. A run then ends by itself instead of at a guessed
// duration: long enough for a p99 at high variance, no longer than needed
// for a p95 of a steady server.
package precision
