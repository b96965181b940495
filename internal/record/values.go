package record

// The JS result's nested values: objects and lists built from a Call.

import (
	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

func errorObject(e *stream.Error) any {
	if e == nil {
		return nil
	}
	return map[string]any{"type": string(e.Type), "message": e.Message}
}

// usageObject is result.usage: null when the server reported none.
func usageObject(c *Call) any {
	u := c.Usage
	if u == nil {
		return nil
	}
	return map[string]any{
		"promptTokens": u.PromptTokens, "completionTokens": u.CompletionTokens,
		"cachedTokens": cachedTokens(u), "reasoningTokens": u.ReasoningTokens, "totalTokens": u.TotalTokens,
	}
}

func toolCalls(c *Call) any {
	tools := make([]any, 0, len(c.ToolCalls))
	for _, t := range c.ToolCalls {
		tools = append(tools, map[string]any{"index": t.Index, "id": t.ID, "name": t.Name, "arguments": t.Arguments})
	}
	return tools
}

// tokensPerSec is the call's decode speed, unknown when it was not measured
// (no TPOT: one output event, or a single token after the first).
func tokensPerSec(c *Call) (float64, bool) {
	return c.TokensPerSec, c.TPOT.Known() && c.TokensPerSec > 0
}

// parseShare is clientParseTime / e2e (0 without an e2e).
func parseShare(c *Call) any {
	e2e, ok := c.E2E.Get()
	if !ok || e2e <= 0 {
		return 0.0
	}
	return float64(c.ClientParse) / float64(e2e)
}

// costObject is result.cost: null without prices.
func costObject(c *Call) any {
	if !c.Priced {
		return nil
	}
	b := c.Cost
	return map[string]any{
		"total": b.Total(), "input": b.Input, "cachedInput": b.CachedInput, "output": b.Output,
		"reasoning": b.Reasoning, "savedByCache": b.Saved, "currency": c.Currency,
	}
}

// attemptList is result.attempts: every attempt of the call, in order.
func attemptList(c *Call) any {
	out := make([]any, len(c.Attempts))
	for i, a := range c.Attempts {
		r := a.Result
		out[i] = map[string]any{
			"route": a.Route, "servedBy": a.Name, "ok": r.OK, "status": r.Status, "error": errorObject(r.Err),
			"ttfb": r.TTFB.JS(), "ttft": r.TTFT.JS(), "e2e": r.E2E.JS(), "reconnects": a.Reconnects,
		}
	}
	return out
}

// resultGaps is result.gaps: every gap in ms with gaps: true, else null.
func resultGaps(c *Call) any {
	if !c.ResultGaps {
		return nil
	}
	return gapList(c.Gaps)
}

func gapList(g stream.Gaps) []float64 {
	out := make([]float64, len(g))
	for i := range g {
		out[i] = measure.MS(g.At(i))
	}
	return out
}

// choiceList is result.choices: each answer of a call that asked for
// several (n > 1), or null.
func choiceList(c *Call) any {
	if len(c.Choices) == 0 {
		return nil
	}
	out := make([]any, len(c.Choices))
	for i, ch := range c.Choices {
		m := map[string]any{"index": ch.Index, "text": ch.Text, "reasoningText": ch.Reasoning,
			"finishReason": ch.FinishReason, "finishSource": finishSource(ch.FinishSource), "gaps": nil}
		if c.ResultGaps {
			m["gaps"] = gapList(ch.Gaps)
		}
		out[i] = m
	}
	return out
}

// finishSource is how the finish reason is known: null for a protocol that
// has none (sse).
func finishSource(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// cachedTokens is null when the usage had no cached-token field: the server
// said nothing about its cache, which is not a count of 0.
func cachedTokens(u *protocol.Usage) any {
	if !u.CachedReported {
		return nil
	}
	return u.CachedTokens
}
