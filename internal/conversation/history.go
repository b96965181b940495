// Package conversation keeps a live conversation as the server answered it:
// each turn's user text, the streamed answer (text, reasoning, tool calls)
// and the tool results, encoded the way each protocol expects its history
// back. It also holds what makes a conversation a user's rather than a list
// of calls: think time between turns, a session key and a router token, and
// the job's own figures. Nothing here knows about k6.
package conversation

import (
	"errors"
	"fmt"
)

// Reasoning policies: what an answer's reasoning becomes in the history.
const (
	ReasoningDrop = "drop" // left out, as most chat apps do
	ReasoningSend = "send" // sent back in the field the protocol reads
)

// Roles of the history's messages.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// ToolCall is one call an answer asked for.
type ToolCall struct {
	ID, Name, Arguments string
}

// ToolResult is what a tool returned for one call.
type ToolResult struct {
	ID, Name, Content string
}

// Thought is a signed piece of an answer's reasoning, as the server sent
// it: Kind is one of protocol's Signed* kinds, Call the tool call's index
// for a signed functionCall part, Text the reasoning the signature covers.
type Thought struct {
	Kind, Signature, Text string
	Call                  int
}

// Message is one entry of the history.
type Message struct {
	Role      string
	Text      string
	Reasoning string
	Thoughts  []Thought    // an assistant's signed reasoning (Anthropic, Gemini)
	ToolCalls []ToolCall   // an assistant's
	Results   []ToolResult // a tool message's
}

// Options shape a history.
type Options struct {
	Protocol  string // a protocol name (openai-chat, anthropic, gemini, ollama, openai-responses)
	System    string
	Reasoning string // ReasoningDrop (default) or ReasoningSend
	// ReasoningField is the assistant message's field reasoning goes back
	// in for openai-chat ("reasoning_content" by default; vLLM reads
	// "reasoning" since 2026).
	ReasoningField string
	// MaxTurns keeps the last MaxTurns user turns (0 = all); MaxTokens
	// drops the oldest turns while the history's text is over that many
	// tokens by Count (0 = no cap). The turn being asked is always kept,
	// and a turn's tool exchange is never split.
	MaxTurns  int
	MaxTokens int
	Count     func(string) int
	// Chain (openai-responses only) sends each turn's new input with the
	// previous answer's id as previous_response_id instead of the whole
	// history: the server keeps the conversation.
	Chain bool
}

// History is one conversation's messages.
type History struct {
	o    Options
	msgs []Message
	// dropped counts the turns the cap has dropped.
	dropped int
	// With Chain: the last answer's response id, and where the messages
	// the server has not seen yet start.
	previous string
	unsent   int
}

// New checks o and returns an empty history.
func New(o Options) (*History, error) {
	if _, ok := encoders[o.Protocol]; !ok {
		return nil, fmt.Errorf("conversation: protocol %q has no conversation history (supported: %s)", o.Protocol, supported())
	}
	switch o.Reasoning {
	case "":
		o.Reasoning = ReasoningDrop
	case ReasoningDrop:
	case ReasoningSend:
		if !sendsReasoning[o.Protocol] {
			return nil, fmt.Errorf("conversation: reasoning 'send' is not supported for %s; use 'drop'", o.Protocol)
		}
	default:
		return nil, fmt.Errorf("conversation: reasoning must be 'drop' or 'send', got %q", o.Reasoning)
	}
	if o.ReasoningField == "" {
		o.ReasoningField = "reasoning_content"
	}
	if o.MaxTurns < 0 || o.MaxTokens < 0 {
		return nil, errors.New("conversation: historyCap turns and tokens must not be negative")
	}
	if o.Chain && o.Protocol != "openai-responses" {
		return nil, fmt.Errorf("conversation: history.chain is for openai-responses (previous_response_id), not %s", o.Protocol)
	}
	if o.Chain && (o.MaxTurns > 0 || o.MaxTokens > 0) {
		return nil, errors.New("conversation: history.chain leaves the history to the server: maxTurns and maxTokens cannot cap it")
	}
	if o.MaxTokens > 0 && o.Count == nil {
		return nil, errors.New("conversation: historyCap tokens needs a tokenizer (the client's tokenizer option is 'none')")
	}
	return &History{o: o}, nil
}

// User adds a user turn and applies the cap.
func (h *History) User(text string) {
	h.msgs = append(h.msgs, Message{Role: RoleUser, Text: text})
	h.cap()
}

// Answer adds the server's answer as it streamed, with its signed
// reasoning (thoughts) when the server signed some.
func (h *History) Answer(text, reasoning string, calls []ToolCall, thoughts ...Thought) {
	h.msgs = append(h.msgs, Message{Role: RoleAssistant, Text: text, Reasoning: reasoning, ToolCalls: calls, Thoughts: thoughts})
}

// Responded notes the id the server gave the last answer: with Chain, the
// next turn names it and sends only what came after it. An answer without
// an id (a server that sends none) makes the next turn send the whole
// history, which such a server needs.
func (h *History) Responded(id string) {
	if !h.o.Chain {
		return
	}
	h.previous = id
	h.unsent = len(h.msgs)
	if id == "" {
		h.unsent = 0
	}
}

// Chained says whether the next Body names a previous answer
// (previous_response_id) instead of sending the whole history.
func (h *History) Chained() bool { return h.o.Chain && h.previous != "" }

// Unchained is the next call's body with the whole history, whatever the
// chain: for a server that never saw the previous answer.
func (h *History) Unchained(base map[string]any) map[string]any {
	cp := *h
	cp.previous = ""
	return cp.Body(base)
}

// Results adds the tools' results for the last answer's calls.
func (h *History) Results(rs []ToolResult) {
	h.msgs = append(h.msgs, Message{Role: RoleTool, Results: rs})
}

// Messages is the history as kept (after the cap).
func (h *History) Messages() []Message { return h.msgs }

// Dropped is how many turns the cap has dropped so far.
func (h *History) Dropped() int { return h.dropped }

// Body is the request body of the next call: the history in the protocol's
// fields, over base (the script's other body fields, kept).
func (h *History) Body(base map[string]any) map[string]any {
	body := make(map[string]any, len(base)+2)
	for k, v := range base {
		body[k] = v
	}
	encoders[h.o.Protocol](h, body)
	return body
}

// cap drops whole turns from the front: a turn starts at a user message and
// holds the answers and tool results that follow it.
func (h *History) cap() {
	starts := h.turnStarts()
	drop := 0
	if h.o.MaxTurns > 0 && len(starts) > h.o.MaxTurns {
		drop = len(starts) - h.o.MaxTurns
	}
	if h.o.MaxTokens > 0 {
		for drop < len(starts)-1 && h.tokensFrom(starts[drop]) > h.o.MaxTokens {
			drop++
		}
	}
	if drop == 0 {
		return
	}
	h.msgs = append([]Message(nil), h.msgs[starts[drop]:]...)
	h.dropped += drop
}

func (h *History) turnStarts() []int {
	var s []int
	for i, m := range h.msgs {
		if m.Role == RoleUser {
			s = append(s, i)
		}
	}
	return s
}

// tokensFrom counts the history's text from message i on (the system prompt
// too: it is sent every turn).
func (h *History) tokensFrom(i int) int {
	n := h.o.Count(h.o.System)
	for _, m := range h.msgs[i:] {
		n += h.o.Count(m.Text)
		if h.o.Reasoning == ReasoningSend {
			n += h.o.Count(m.Reasoning)
		}
		for _, c := range m.ToolCalls {
			n += h.o.Count(c.Arguments)
		}
		for _, r := range m.Results {
			n += h.o.Count(r.Content)
		}
	}
	return n
}
