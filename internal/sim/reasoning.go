package sim

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"strconv"
	"strings"
)

// Reasoning on demand. A streamed request that carries X-Sim-Reasoning (or
// is sent to a model with reasoning_tokens) is answered with that many
// reasoning tokens before its text or tool calls, in its protocol's own
// form (reasoning_render.go): OpenAI chat delta.reasoning_content (or
// delta.reasoning), Ollama message.thinking, an Anthropic thinking block
// closed by its signature_delta (and, when asked, a redacted_thinking
// block), Gemini parts with thought: true and a thoughtSignature, a
// Responses reasoning output item with its summary and encrypted_content.
// The reasoning tokens count in the answer's output tokens, as every API
// counts them.
//
// The words are a function of the seed and the prompt, as the text is. The
// signatures are a keyed hash, under the server's seed, of what they
// cover: llm-sim keeps no state between requests, yet knows on the next
// turn whether a signature is one it issued for that reasoning, and
// refuses what the APIs document they refuse (reasoning_check.go).

// ReasoningHeader asks for reasoning: its tokens, and ",redacted" for an
// Anthropic redacted_thinking block after the thinking block ("16" or
// "16,redacted").
const ReasoningHeader = "X-Sim-Reasoning"

// maxReasoningTokens bounds the reasoning a request or a model may ask for.
const maxReasoningTokens = 1 << 16

// reasoningProtocols are the protocols whose streams carry reasoning.
var reasoningProtocols = map[string]bool{ //nolint:gochecknoglobals // read-only table
	"openai-chat": true, "openai-responses": true, "anthropic": true, "gemini": true, "ollama": true,
}

// reasoningPlan is one answer's reasoning: planned, then streamed.
type reasoningPlan struct {
	tokens   int
	redacted bool   // Anthropic: a redacted_thinking block after the thinking block
	field    string // OpenAI chat: the delta field (reasoning_content or reasoning)
	seed     uint64 // the reasoning's words
	key      signKey
	// text is the reasoning streamed so far; signatures what llm-sim
	// signed it with, in stream order (for the trace).
	text       []byte
	signatures []string
}

// words are reasoning tokens [from, from+n).
func (p *reasoningPlan) words(dst []byte, from, n int) []byte {
	return appendWords(dst, p.seed, from, n)
}

// size is the plan's tokens (0 without a plan).
func (p *reasoningPlan) size() int {
	if p == nil {
		return 0
	}
	return p.tokens
}

// sign signs what the reasoning streamed so far and notes the signature.
func (p *reasoningPlan) sign(kind string) string {
	s := p.key.sign(kind, p.text)
	p.signatures = append(p.signatures, s)
	return s
}

// redactedData is an Anthropic redacted_thinking block's data: opaque, and
// llm-sim's own (it reads its key back out of it).
func (p *reasoningPlan) redactedData() string {
	var nonce [8]byte
	binary.BigEndian.PutUint64(nonce[:], splitmix64(p.seed^0x72656461))
	d := p.key.mac("redacted_thinking", nonce[:])
	s := base64.StdEncoding.EncodeToString(append(nonce[:], d[:24]...))
	p.signatures = append(p.signatures, s)
	return s
}

// signKey is the server's signing key, from its seed.
type signKey uint64

func (k signKey) mac(kind string, covered []byte) [sha256.Size]byte {
	var kb [8]byte
	binary.BigEndian.PutUint64(kb[:], uint64(k))
	h := sha256.New()
	h.Write(kb[:])
	h.Write([]byte(kind))
	h.Write([]byte{0})
	h.Write(covered)
	var out [sha256.Size]byte
	copy(out[:], h.Sum(nil))
	return out
}

// sign is a signature of covered (of one kind), base64 as the APIs send theirs.
func (k signKey) sign(kind string, covered []byte) string {
	d := k.mac(kind, covered)
	return base64.StdEncoding.EncodeToString(d[:])
}

// issuedRedacted says whether data is a redacted_thinking block llm-sim streamed.
func (k signKey) issuedRedacted(data string) bool {
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil || len(raw) != 32 {
		return false
	}
	d := k.mac("redacted_thinking", raw[:8])
	return string(d[:24]) == string(raw[8:])
}

func (s *Server) signKey() signKey { return signKey(splitmix64(s.cfg.Seed ^ 0x7369676e)) }

// parseReasoningRequest reads X-Sim-Reasoning: tokens and whether a
// redacted block is asked for; n is 0 when the header is absent.
func parseReasoningRequest(h http.Header) (n int, redacted bool, err *apiError) {
	v := strings.TrimSpace(h.Get(ReasoningHeader))
	if v == "" {
		return 0, false, nil
	}
	count, rest, _ := strings.Cut(v, ",")
	n, convErr := strconv.Atoi(strings.TrimSpace(count))
	switch rest = strings.TrimSpace(rest); {
	case convErr != nil || n < 1 || n > maxReasoningTokens:
		return 0, false, badRequest(ReasoningHeader, ReasoningHeader+" must be reasoning tokens 1.."+strconv.Itoa(maxReasoningTokens)+
			", optionally followed by \",redacted\" (e.g. \"16\" or \"16,redacted\"), got "+strconv.Quote(v))
	case rest == "redacted":
		return n, true, nil
	case rest != "":
		return 0, false, badRequest(ReasoningHeader, ReasoningHeader+": after the tokens only \",redacted\" may follow, got "+strconv.Quote(v))
	}
	return n, false, nil
}

// reasoningAnswer is the plan of a request's reasoning, nil when it has
// none. A model's reasoning_tokens is a default, not a request: a request it
// cannot apply to (not streamed, a protocol without reasoning) gets none
// rather than a refusal.
func reasoningAnswer(p protocol, r *http.Request, stream bool, prof *ModelProfile, textSeed uint64, key signKey) (*reasoningPlan, *apiError) {
	n, redacted, aerr := parseReasoningRequest(r.Header)
	if aerr != nil {
		return nil, aerr
	}
	asked := n > 0
	if !asked {
		n = prof.ReasoningTokens
	}
	if n == 0 {
		return nil, nil
	}
	refuse := func(msg string) (*reasoningPlan, *apiError) {
		if !asked {
			return nil, nil
		}
		return nil, badRequest(ReasoningHeader, msg)
	}
	switch {
	case !stream:
		return refuse("llm-sim streams reasoning in streamed requests only")
	case !reasoningProtocols[p.name()]:
		return refuse("llm-sim streams reasoning in openai-chat, openai-responses, anthropic, gemini and ollama, not in " + p.name())
	case redacted && p.name() != "anthropic":
		return refuse(ReasoningHeader + ": redacted thinking is Anthropic's; " + p.name() + " has none")
	}
	field := prof.ReasoningField
	if field == "" {
		field = "reasoning_content"
	}
	return &reasoningPlan{tokens: n, redacted: redacted, field: field, seed: splitmix64(textSeed ^ 0x7265617330), key: key}, nil
}
