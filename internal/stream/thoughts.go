package stream

import (
	"strings"

	"github.com/llmstream/xk6-llmstream/internal/protocol"
)

// Thought is one signed piece of an answer's reasoning: what a server wants
// back, verbatim, when the answer is sent back in a conversation's history.
type Thought struct {
	Kind      string // protocol.SignedThinking, SignedRedacted, SignedThought, SignedText, SignedCall
	Call      int    // the tool call's index, for SignedCall
	Signature string // the signature (a redacted block's data)
	// Text is the reasoning the signature covers: Anthropic's thinking
	// block, Gemini's thought parts read since the previous signature.
	Text string
}

// signed collects an answer's signatures. It holds offsets into the
// reasoning rather than copies, so a call whose server signs nothing pays
// nothing, and one that does pays one slice of the final text per thought.
type signed struct {
	list []signedAt
	from int // where the reasoning not yet covered by a signature starts
}

type signedAt struct {
	Thought
	from, to int
}

// add keeps an event's signatures; reasoning is the length of the
// reasoning read so far (this event's included).
func (s *signed) add(sigs []protocol.Signature, reasoning int) {
	for _, g := range sigs {
		at := signedAt{Thought: Thought{Kind: g.Kind, Call: g.Call, Signature: strings.Clone(g.Value)}}
		if g.Kind == protocol.SignedThinking || g.Kind == protocol.SignedThought {
			at.from, at.to = s.from, reasoning
			s.from = reasoning
		}
		s.list = append(s.list, at)
	}
}

// thoughts are the signatures with the text each covers.
func (s *signed) thoughts(reasoning string) []Thought {
	if len(s.list) == 0 {
		return nil
	}
	out := make([]Thought, len(s.list))
	for i, a := range s.list {
		out[i] = a.Thought
		if a.to > a.from && a.to <= len(reasoning) {
			out[i].Text = reasoning[a.from:a.to]
		}
	}
	return out
}
