package stream

import (
	"fmt"
	"strings"
	"time"
)

// Several answers in one stream (n > 1): the server interleaves the choices'
// pieces, each tagged with its index. Until a piece of a choice other than 0
// arrives the call is read as one answer (no cost for n = 1); from then on each
// choice has its own text, finish reason and gap series, so a gap is the wait
// between two pieces of the same answer, never between two answers' pieces.

// maxChoices bounds the choice index a server may name.
const maxChoices = 128

// Choice is one answer of a call that asked for several.
type Choice struct {
	Index        int
	Text         string
	Reasoning    string
	FinishReason string
	FinishSource string // how FinishReason is known (FinishFromServer or FinishNone)
	Gaps         Gaps
}

type choiceState struct {
	text, reasoning strings.Builder
	finish          string
	lastOut         time.Time
	gaps            Gaps
}

// choice returns the state of choice i, starting per-choice reading when a
// choice other than 0 first appears: everything read so far was choice 0's.
func (c *Call) choice(i int) (*choiceState, error) {
	if i < 0 || i >= maxChoices {
		return nil, fmt.Errorf("choice index %d is out of range (0–%d)", i, maxChoices-1)
	}
	if c.choices == nil {
		if i == 0 {
			return nil, nil //nolint:nilnil // one answer so far: read as a single stream
		}
		first := choiceState{finish: c.finish, lastOut: c.lastOut, gaps: c.gaps}
		first.text.WriteString(c.text.String())
		first.reasoning.WriteString(c.reasoning.String())
		c.choices = []*choiceState{&first}
		c.gaps = nil // the gaps are the choices' from now on
	}
	for len(c.choices) <= i {
		c.choices = append(c.choices, &choiceState{})
	}
	return c.choices[i], nil
}

// choiceGap folds a piece of choice ch arriving at at: the gap since the same
// choice's previous piece.
func (c *Call) choiceGap(ch *choiceState, at time.Time) {
	if !ch.lastOut.IsZero() {
		ch.gaps = append(ch.gaps, c.countGap(at.Sub(ch.lastOut)))
	}
	ch.lastOut = at
}

// finishChoices fills the result of a call with several answers: its text is
// the first choice's, its gaps every choice's in turn. Whether a choice
// without a finish reason makes the call truncated is judgeEnd's.
func (c *Call) finishChoices(r *Result) {
	if c.choices == nil {
		return
	}
	r.Choices = make([]Choice, len(c.choices))
	var gaps Gaps
	for i, ch := range c.choices {
		r.Choices[i] = Choice{Index: i, Text: ch.text.String(), Reasoning: ch.reasoning.String(),
			FinishReason: ch.finish, Gaps: ch.gaps}
		gaps = append(gaps, ch.gaps...)
	}
	r.Text, r.Reasoning, r.FinishReason, r.Gaps = r.Choices[0].Text, r.Choices[0].Reasoning, r.Choices[0].FinishReason, gaps
}
