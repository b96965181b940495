// Package dataset builds the prompt sets of a load test: synthetic prompts of
// exact token lengths by length class, prompts loaded from files and bucketed
// by rules, scrubbed of personal data, sampled in known proportions over the
// whole test, plus shared-prefix and cache-busting scenarios, growing
// conversations and open-model request arrivals. A test split across several
// k6 instances (execution segments) splits these sequences too, so the
// instances together run what one instance would (see Share). Nothing here
// depends on k6: binding/datasets wraps it for JavaScript.
package dataset
