package dataset

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// Text styles: the shape of a synthetic prompt around its adjustable body.
const (
	styleQuestion = "question" // a short question (short class)
	styleTask     = "task"     // context then a request (medium class)
	styleDocument = "document" // a long document then a question (long context)
	styleEssay    = "essay"    // a short request for a long answer (long output)
)

func validStyle(s string) bool {
	switch s {
	case styleQuestion, styleTask, styleDocument, styleEssay:
		return true
	}
	return false
}

// styleFor picks a style for a custom category from its lengths.
func styleFor(c Category) string {
	switch {
	case c.MaxTokens.Min >= 1000 && c.Prompt.Max <= 200:
		return styleEssay
	case c.Prompt.Max <= 100:
		return styleQuestion
	case c.Prompt.Max <= 1500:
		return styleTask
	default:
		return styleDocument
	}
}

// grammar draws words and sentences from one item's random stream.
type grammar struct{ r *rand.Rand }

func (g grammar) pick(list []string) string { return list[g.r.IntN(len(list))] }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// sentence is one declarative sentence of background prose.
func (g grammar) sentence() string {
	switch g.r.IntN(6) {
	case 0:
		return "The " + g.pick(adjectives) + " " + g.pick(nouns) + " was " + g.pick(pastVerbs) +
			" by the " + g.pick(teams) + " team " + g.pick(times) + "."
	case 1:
		return capitalize(g.pick(times)) + ", we " + g.pick(pastVerbs) + " the " + g.pick(nouns) +
			" and the " + g.pick(adjectives) + " " + g.pick(nouns) + "."
	case 2:
		return "Each " + g.pick(nouns) + " needs a " + g.pick(adjectives) + " " + g.pick(nouns) +
			" before the " + g.pick(teams) + " team can " + g.pick(verbs) + " it."
	case 3:
		return "According to the " + g.pick(adjectives) + " " + g.pick(nouns) + ", the " + g.pick(nouns) +
			" for " + g.pick(teams) + " grew by " + itoa(2+g.r.IntN(40)) + " percent."
	case 4:
		return "We still have to " + g.pick(verbs) + " the " + g.pick(nouns) + " of the " +
			g.pick(adjectives) + " " + g.pick(nouns) + "."
	default:
		return "The " + g.pick(teams) + " team asked whether the " + g.pick(nouns) + " can be " +
			g.pick(pastVerbs) + " " + g.pick(times) + "."
	}
}

func (g grammar) question() string {
	switch g.r.IntN(4) {
	case 0:
		return "How should we " + g.pick(verbs) + " the " + g.pick(adjectives) + " " + g.pick(nouns) + "?"
	case 1:
		return "What is the difference between a " + g.pick(nouns) + " and a " + g.pick(nouns) + "?"
	case 2:
		return "Can you " + g.pick(verbs) + " the " + g.pick(nouns) + " for the " + g.pick(teams) + " team?"
	default:
		return "Why was the " + g.pick(adjectives) + " " + g.pick(nouns) + " " + g.pick(pastVerbs) + " " +
			g.pick(times) + "?"
	}
}

// layout is a prompt as fixed head and tail around a body that the fitter
// lengthens or shortens piece by piece. Each piece carries its own leading
// separator so pieces can be dropped at the end without breaking the rest.
type layout struct {
	head, tail string
	body       func() []string // produces more pieces each call
}

// answerTokens is the item's max_tokens: an essay request asks for about as
// many words as the answer may hold (a word is ~1.3 tokens).
func (g grammar) layout(style string, answerTokens int) layout {
	switch style {
	case styleQuestion:
		q := g.question()
		return layout{head: q, body: func() []string { return words(" " + g.sentence()) }}
	case styleTask:
		head := "You are helping the " + g.pick(teams) + " team with their " + g.pick(adjectives) + " " +
			g.pick(nouns) + ". Here is the background."
		tail := "\n\nPlease " + g.pick(verbs) + " the " + g.pick(nouns) + " and list the next three steps."
		return layout{head: head, tail: tail, body: func() []string { return words(" " + g.sentence()) }}
	case styleDocument:
		head := "Read the following " + g.pick(docKinds) + " and answer the question at the end.\n\n"
		tail := "\n\nQuestion: " + g.question()
		n := 0
		return layout{head: head, tail: tail, body: func() []string {
			n++
			sep := " "
			if n == 1 {
				sep = ""
			} else if n%6 == 1 {
				sep = "\n\n" // paragraphs, as real documents have
			}
			return words(sep + g.sentence())
		}}
	default: // styleEssay
		head := "Write a detailed " + itoa(max(100, answerTokens*3/4/50*50)) + "-word " + g.pick(essayKinds) + " about the " +
			g.pick(adjectives) + " " + g.pick(nouns) + " of the " + g.pick(teams) + " team."
		return layout{head: head, body: func() []string {
			return words(" Cover the " + g.pick(nouns) + ", the " + g.pick(nouns) + " and how to " + g.pick(verbs) +
				" the " + g.pick(adjectives) + " " + g.pick(nouns) + ".")
		}}
	}
}

// words splits a sentence into pieces, each with its leading whitespace.
func words(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] == ' ' && s[i-1] != ' ' && s[i-1] != '\n' {
			out = append(out, s[start:i])
			start = i
		}
	}
	return append(out, s[start:])
}

func itoa(n int) string { return strconv.Itoa(n) }
