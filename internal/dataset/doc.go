// Package dataset builds the prompt sets of a load test (seed §1.2): synthetic
// prompts of exact token lengths by length class, prompts loaded from files and
// bucketed by rules, scrubbed of personal data, sampled in known proportions
// over the whole test, plus cache scenarios (§3.2), growing conversations and
// open-model request arrivals (§4.3). Nothing here depends on k6: the root
// package wraps it for JavaScript.
package dataset
