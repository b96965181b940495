package llmstream

import (
	"time"
)

// toJS builds the result object of DESIGN.md: flat, camelCase, times in ms.
// Figures that could not be measured are null, never a made-up zero.
func (o *outcome) toJS() map[string]any {
	r := o.res
	var errObj any
	if r.Err != nil {
		errObj = map[string]any{"type": string(r.Err.Type), "message": r.Err.Message}
	}
	var usage any
	if u := r.Usage; u != nil {
		usage = map[string]any{
			"promptTokens": u.PromptTokens, "completionTokens": u.CompletionTokens,
			"cachedTokens": u.CachedTokens, "reasoningTokens": u.ReasoningTokens, "totalTokens": u.TotalTokens,
		}
	}
	tools := make([]any, 0, len(r.ToolCalls))
	for _, t := range r.ToolCalls {
		tools = append(tools, map[string]any{"index": t.Index, "id": t.ID, "name": t.Name, "arguments": t.Arguments})
	}
	var timings any
	if len(r.ServerTimings) > 0 {
		timings = r.ServerTimings
	}
	var tps any
	if r.TPOT >= 0 {
		tps = r.TokensPerSec
	}
	share := 0.0
	if r.E2E > 0 {
		share = float64(r.ClientParse) / float64(r.E2E)
	}
	m := map[string]any{
		"ok":               r.OK,
		"status":           o.status,
		"error":            errObj,
		"text":             r.Text,
		"reasoningText":    r.Reasoning,
		"toolCalls":        tools,
		"finishReason":     r.FinishReason,
		"usage":            usage,
		"tokenSource":      r.TokenSource,
		"model":            r.Model,
		"ttfb":             ms(r.TTFB),
		"ttft":             ms(r.TTFT),
		"ttftAnswer":       ms(r.TTFTAnswer),
		"e2e":              ms(r.E2E),
		"tpot":             ms(r.TPOT),
		"tokensPerSec":     tps,
		"clientParseTime":  ms(r.ClientParse),
		"clientParseShare": share,
		"chunks":           r.Chunks,
		"outputTokens":     r.OutputTokens,
		"stalls":           r.Stalls,
		"retries":          o.retries,
		"reconnects":       o.reconnects,
		"servedBy":         o.servedBy,
		"requestId":        r.RequestID,
		"serverTimings":    timings,
		"cache":            cacheState(r),
		"gaps":             nil,
	}
	if o.plan.params.Gaps {
		gaps := make([]float64, len(r.Gaps))
		for i, g := range r.Gaps {
			gaps[i] = msf(g)
		}
		m["gaps"] = gaps
	}
	return m
}

func ms(d time.Duration) any {
	if d < 0 { // stream.Absent
		return nil
	}
	return msf(d)
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
