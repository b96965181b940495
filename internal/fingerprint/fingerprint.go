package fingerprint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/llmstream/xk6-llmstream/internal/report/runrecord"
)

// Inputs are what a fingerprint is made of, as the binding gathers them.
type Inputs struct {
	// Files are Files' digests (nil: the file system could not be read).
	Files map[string]string
	// K6Options are k6's scenarios and thresholds, anything that encodes to
	// JSON (the binding passes k6's own types; JSON sorts their maps).
	K6Options any
	// Clients are the Clients' labels and ClientDigest's digests.
	Clients []Client
	// Datasets are the data sets' identities, in any order.
	Datasets        []runrecord.DatasetInfo
	SegmentSequence string
}

// Client is one Client in a fingerprint: the label its calls carry and the
// digest of its options.
type Client struct {
	Label, Digest string
}

// Of is the fingerprint of the inputs: each part's digest, and one over all.
func Of(in Inputs) (*runrecord.Fingerprint, error) {
	fp := &runrecord.Fingerprint{Files: in.Files, SegmentSequence: in.SegmentSequence}
	var err error
	if in.K6Options != nil {
		if fp.Options, err = digestJSON(in.K6Options); err != nil {
			return nil, fmt.Errorf("fingerprint: k6's options: %w", err)
		}
	}
	fp.Clients = clientDigests(in.Clients)
	if len(in.Datasets) > 0 {
		if fp.Datasets, err = datasetsDigest(in.Datasets); err != nil {
			return nil, fmt.Errorf("fingerprint: data sets: %w", err)
		}
	}
	whole := *fp
	if fp.Digest, err = digestJSON(whole); err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	return fp, nil
}

// clientDigests keys the clients by label. Two Clients with one label (two
// unnamed clients of one host) share its entry: their digests, sorted, make
// it, so the order the script creates them in does not matter.
func clientDigests(clients []Client) map[string]string {
	if len(clients) == 0 {
		return nil
	}
	byLabel := map[string][]string{}
	for _, c := range clients {
		byLabel[c.Label] = append(byLabel[c.Label], c.Digest)
	}
	out := make(map[string]string, len(byLabel))
	for label, ds := range byLabel {
		if len(ds) == 1 {
			out[label] = ds[0]
			continue
		}
		sort.Strings(ds)
		out[label] = digestBytes([]byte(fmt.Sprint(ds)))
	}
	return out
}

// datasetsDigest digests the data sets in an order of their own, not the
// order the script happened to create them in.
func datasetsDigest(ds []runrecord.DatasetInfo) (string, error) {
	encoded := make([]string, len(ds))
	for i, d := range ds {
		b, err := json.Marshal(d)
		if err != nil {
			return "", err
		}
		encoded[i] = string(b)
	}
	sort.Strings(encoded)
	return digestJSON(encoded)
}

// digestJSON is the SHA-256 of v's JSON, which sorts map keys: equal values
// digest equally whatever order their maps were filled in.
func digestJSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err //nolint:wrapcheck // the callers say what was digested
	}
	return digestBytes(b), nil
}

func digestBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
