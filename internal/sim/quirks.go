package sim

import (
	"fmt"
	"strconv"
)

// Server quirks: switches that make the OpenAI routes answer the way some
// real servers do, where they differ from OpenAI's documents, so the client's
// reading of them is tested end to end. Off by default.
//
//   - omit_finish_reason: no chunk names a finish. llm-d's inference
//     simulator (v0.9.2) streams the content chunks, the usage chunk and
//     [DONE] and nothing else, so an answer is complete without a finish
//     reason.
//   - cached_tokens_field: where the usage object puts the prompt's cached
//     tokens: prompt_tokens_details (OpenAI, vLLM; the default),
//     prompt_tokens_detail (llm-d's simulator, singular), or none (vLLM
//     without --enable-prompt-tokens-details: no cached count at all).

// The cached_tokens_field values.
const (
	CachedFieldDetails = "prompt_tokens_details"
	CachedFieldDetail  = "prompt_tokens_detail"
	CachedFieldNone    = "none"
)

// quirks are a response's quirk switches, from its model's profile.
type quirks struct {
	omitFinish  bool
	cachedField string // "" = CachedFieldDetails
}

func (p *ModelProfile) quirks() quirks {
	return quirks{omitFinish: p.OmitFinishReason, cachedField: p.CachedTokensField}
}

func checkCachedField(v string) error {
	switch v {
	case "", CachedFieldDetails, CachedFieldDetail, CachedFieldNone:
		return nil
	}
	return fmt.Errorf("cached_tokens_field must be %s, %s or %s (got %q)", CachedFieldDetails, CachedFieldDetail, CachedFieldNone, v)
}

// appendCachedTokens appends the usage object's cached-token member, after
// a comma, in the spelling the quirk asks for (nothing for none).
func (q quirks) appendCachedTokens(b []byte, cached int) []byte {
	name := CachedFieldDetails
	switch q.cachedField {
	case CachedFieldNone:
		return b
	case CachedFieldDetail:
		name = CachedFieldDetail
	}
	b = append(b, `,"`...)
	b = append(b, name...)
	b = append(b, `":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(cached), 10)
	return append(b, '}')
}
