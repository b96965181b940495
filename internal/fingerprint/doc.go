// Package fingerprint computes a run's fingerprint (runrecord.Fingerprint):
// digests of the files the test read (its script, modules and data), of
// k6's options that shape it, of each Client's options with their secrets
// left out, and of its data sets, so that `llmstream merge` can refuse the
// records of two tests that only look alike. The binding gathers the inputs
// from k6 (its file system, its options); everything here works on plain Go
// values and an io/fs file system, tested without k6.
//
// A fingerprint must be the same on every instance of one test: nothing an
// instance has of its own goes in (its execution segment, its start, its
// credentials, its tags, the absolute paths of its files).
package fingerprint
