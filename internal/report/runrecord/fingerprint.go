package runrecord

import (
	"fmt"
	"sort"
)

// Fingerprint identifies the test a run belongs to: digests of what makes
// it that test and no other, so that records of two tests whose load shape
// and clients look alike (other prompts in the script, another max_tokens,
// another data file) are not merged as one. It leaves out what differs
// between the instances of one test: the execution segment, the start time,
// the credentials, the versions and the tags.
//
// Each part keeps its own digest so a refusal can say what differs; Digest
// is over them all. A part the instance could not read is absent and is not
// compared (a script read from standard input has no file).
type Fingerprint struct {
	Digest string `json:"digest"`
	// Files are the files the test read through k6's file system (the
	// script, its modules, the data it opened), by their path relative to
	// the script's directory: path → SHA-256 of the bytes.
	Files map[string]string `json:"files,omitempty"`
	// Options is the digest of k6's options that shape the test: the
	// scenarios (stages, VUs, rates as k6 resolved them) and the thresholds.
	Options string `json:"options,omitempty"`
	// Clients are each Client's options, secrets and tags left out: label →
	// digest.
	Clients map[string]string `json:"clients,omitempty"`
	// Datasets is the digest of the data sets' identities (source, options,
	// size and the content's digest), in a stable order.
	Datasets string `json:"datasets,omitempty"`
	// SegmentSequence is k6's execution segment sequence, the same for
	// every instance of one test ("" when none was given).
	SegmentSequence string `json:"segment_sequence,omitempty"`
}

// FingerprintDifferences says, in words, what makes two fingerprints those
// of different tests, a's side first; none when they are of one test. Nil
// fingerprints (records of older versions) cannot be compared: none.
func FingerprintDifferences(a, b *Fingerprint) []string {
	if a == nil || b == nil || a.Digest == b.Digest {
		return nil
	}
	var out []string
	out = append(out, mapDifferences("file", a.Files, b.Files)...)
	if a.Options != b.Options {
		out = append(out, "k6's options (scenarios, thresholds) differ")
	}
	out = append(out, mapDifferences("client", a.Clients, b.Clients)...)
	if a.Datasets != b.Datasets {
		out = append(out, "the data sets differ (source, options or content)")
	}
	if a.SegmentSequence != b.SegmentSequence {
		out = append(out, fmt.Sprintf("execution segment sequence %s vs %s",
			showValue(a.SegmentSequence, true), showValue(b.SegmentSequence, true)))
	}
	if len(out) == 0 {
		out = append(out, fmt.Sprintf("fingerprint %s vs %s", short(a.Digest), short(b.Digest)))
	}
	return out
}

// mapDifferences names the keys whose digests differ or that one side
// lacks: "file script.js differs", "file extra.json only in the second".
func mapDifferences(what string, a, b map[string]string) []string {
	if a == nil || b == nil {
		return nil // a part the instance could not read is not compared
	}
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		da, oka := a[k]
		db, okb := b[k]
		switch {
		case !okb:
			out = append(out, fmt.Sprintf("%s %s only in the first", what, k))
		case !oka:
			out = append(out, fmt.Sprintf("%s %s only in the second", what, k))
		case da != db:
			out = append(out, fmt.Sprintf("%s %s differs (%s vs %s)", what, k, short(da), short(db)))
		}
	}
	return out
}

// short is a digest's first 12 hex digits: enough to tell two apart.
func short(d string) string {
	if len(d) > 12 {
		return d[:12]
	}
	return d
}
