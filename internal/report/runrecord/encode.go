package runrecord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Encode writes the record as indented JSON, whatever numbers it holds.
// JSON has no NaN or ±Inf, and encoding/json refuses the whole value for
// one of them: a single bad number from a metrics endpoint, a server's
// answer, the script's meta or a ratio of zero to zero would lose the run's
// only record. So a number that is not finite is written as null (unknown)
// and its place, a JSON Pointer such as "/server/0/run/histograms/ttft/mean",
// is listed in the record's non_finite and returned for the caller to say.
// The sources keep such numbers out themselves; this is the last line of
// defence, taken only when encoding/json refuses the record, so a record
// without one is written byte for byte as before.
func Encode(rec *Record) (data []byte, nonFinite []string, err error) {
	if data, err = json.MarshalIndent(rec, "", " "); err == nil {
		return data, nil, nil
	}
	if _, nonFinite, err = encodeNullingNonFinite(rec); err != nil {
		return nil, nil, fmt.Errorf("encoding the run record: %w", err)
	}
	marked := *rec // the caller's record stays as it was
	marked.NonFinite = nonFinite
	if data, _, err = encodeNullingNonFinite(&marked); err != nil {
		return nil, nil, fmt.Errorf("encoding the run record: %w", err)
	}
	return data, nonFinite, nil
}

// encodeNullingNonFinite is encoding/json's MarshalIndent with null for
// every number that is not finite, and where each was. It uses the Go
// team's encoding/json v2 prototype (already in k6's module graph) in its
// v1-compatible mode: v2 lets a marshaler for float64 see the encoder's
// place in the document, which v1 has no way to do, and its v1 options keep
// the layout encoding/json gives (field names, omitempty, methods).
func encodeNullingNonFinite(v any) ([]byte, []string, error) {
	var places []string
	null := func(enc *jsontext.Encoder, f float64) error {
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			return jsonv2.SkipFunc // a finite number: encoded as usual
		}
		if err := enc.WriteToken(jsontext.Null); err != nil {
			return err //nolint:wrapcheck // returned to the encoder, which says where
		}
		places = append(places, string(enc.StackPointer()))
		return nil
	}
	marshalers := jsonv2.JoinMarshalers(
		jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, f float64, _ jsonv2.Options) error { return null(enc, f) }),
		jsonv2.MarshalToFunc(func(enc *jsontext.Encoder, f float32, _ jsonv2.Options) error { return null(enc, float64(f)) }),
	)
	compact, err := jsonv2.Marshal(v, jsonv1.DefaultOptionsV1(), jsonv2.WithMarshalers(marshalers))
	if err != nil {
		return nil, nil, err //nolint:wrapcheck // Encode names the record
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", " "); err != nil {
		return nil, nil, err //nolint:wrapcheck // Encode names the record
	}
	return out.Bytes(), places, nil
}

// maxNamedPlaces bounds the places NonFiniteNote lists.
const maxNamedPlaces = 10

// NonFiniteNote is the one warning for what Encode wrote as null: how many
// numbers and where; "" when there were none.
func NonFiniteNote(places []string) string {
	if len(places) == 0 {
		return ""
	}
	named, more := places, ""
	if len(named) > maxNamedPlaces {
		named, more = named[:maxNamedPlaces], fmt.Sprintf(", and %d more", len(places)-maxNamedPlaces)
	}
	return fmt.Sprintf("the run record had %d numbers that were not finite (NaN or ±Inf), written as null (unknown): %s%s",
		len(places), strings.Join(named, ", "), more)
}
