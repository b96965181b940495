package protocol

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/tidwall/gjson"
)

func init() {
	Register(&Spec{
		Name:    "gemini",
		Framing: FramingSSE,
		Path: func(r Request) string {
			// The model is in the path; "models/x" and "x" both name it.
			m := strings.TrimPrefix(r.Model, "models/")
			return "/models/" + url.PathEscape(m) + ":streamGenerateContent?alt=sse"
		},
		Prepare: noPrepare, // the endpoint streams; the body has no flag for it
		Headers: func(h http.Header, r Request) {
			if r.APIKey != "" {
				h.Set("x-goog-api-key", r.APIKey)
			}
			streamHeaders(h, "text/event-stream")
		},
		NewDecoder:       func() Decoder { return &gemini{} },
		OutputLimitField: "generationConfig.maxOutputTokens",
		LengthFinish:     "MAX_TOKENS",
	})
}

// gemini decodes streamGenerateContent?alt=sse: each event is a whole
// GenerateContentResponse; thought parts are reasoning; usageMetadata is
// cumulative; no sentinel, the last chunk has finishReason.
type gemini struct {
	candidates, thoughts int64 // highest counts seen: intermediate chunks may omit them
	tools                int
}

func (g *gemini) Decode(ev Event, d *Delta) error {
	root, err := parseObject(ev.Data)
	if err != nil {
		return err
	}
	if e := root.Get("error"); e.Exists() && e.Type != gjson.Null {
		se := openAIError(e)
		if s := str(e, "status"); s != "" {
			se.Code = s
		}
		d.Err = se
		return nil
	}
	d.Model = str(root, "modelVersion")
	root.Get("candidates").ForEach(func(_, c gjson.Result) bool {
		g.candidate(c, d)
		return true
	})
	// A prompt blocked by safety gets promptFeedback and no candidate: the
	// server has answered, with nothing.
	if br := str(root, "promptFeedback.blockReason"); br != "" {
		setFinish(d, br)
	}
	if u := root.Get("usageMetadata"); u.IsObject() {
		d.Usage = g.usage(u)
		d.UsageCumulative = true
	}
	return nil
}

func (g *gemini) candidate(c gjson.Result, d *Delta) {
	c.Get("content.parts").ForEach(func(_, p gjson.Result) bool {
		if fc := p.Get("functionCall"); fc.IsObject() {
			d.ToolCalls = append(d.ToolCalls, ToolCallDelta{
				Index: g.tools,
				ID:    str(fc, "id"),
				Name:  str(fc, "name"),
				Args:  rawArgs(fc.Get("args")),
			})
			if sig := str(p, "thoughtSignature"); sig != "" {
				d.Signatures = append(d.Signatures, Signature{Kind: SignedCall, Call: g.tools, Value: sig})
			}
			g.tools++
			return true
		}
		kind := SignedText
		if p.Get("thought").Bool() {
			d.Reasoning += str(p, "text")
			kind = SignedThought
		} else {
			d.Text += str(p, "text")
		}
		if sig := str(p, "thoughtSignature"); sig != "" {
			d.Signatures = append(d.Signatures, Signature{Kind: kind, Value: sig})
		}
		return true
	})
	setFinish(d, str(c, "finishReason"))
}

// usage reads the cumulative usageMetadata. candidatesTokenCount excludes
// thoughts, so the output count (OpenAI's meaning: reasoning included) is
// candidates + thoughts. Intermediate chunks may omit a field: the running
// count keeps its highest value instead of falling back to 0, which would make
// the per-event count go backwards.
func (g *gemini) usage(u gjson.Result) *Usage {
	g.candidates = max(g.candidates, nonNegInt(u, "candidatesTokenCount"))
	g.thoughts = max(g.thoughts, nonNegInt(u, "thoughtsTokenCount"))
	return &Usage{
		PromptTokens:     nonNegInt(u, "promptTokenCount"), // includes cached content
		CompletionTokens: addCounts(g.candidates, g.thoughts),
		CachedTokens:     nonNegInt(u, "cachedContentTokenCount"),
		// Gemini's JSON is proto3's, which leaves zero counts out: a
		// usageMetadata without cachedContentTokenCount says nothing was
		// cached, as promptTokenCount's absence would say an empty prompt.
		CachedReported:  u.Get("promptTokenCount").Exists() || u.Get("cachedContentTokenCount").Exists(),
		ReasoningTokens: g.thoughts,
		TotalTokens:     nonNegInt(u, "totalTokenCount"),
	}
}
