package agent

import "sort"

// Declarations are the tools as a protocol's request declares them, for its
// "tools" body field. Tools are sorted by name so the request, and a server's
// prefix cache, see the same bytes every step.
func Declarations(protocol string, tools []Tool) (any, bool) {
	ts := append([]Tool(nil), tools...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	schema := func(t Tool) map[string]any {
		if t.Parameters != nil {
			return t.Parameters
		}
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	fn := func(t Tool) map[string]any {
		f := map[string]any{"name": t.Name, "parameters": schema(t)}
		if t.Description != "" {
			f["description"] = t.Description
		}
		return f
	}
	out := make([]any, 0, len(ts))
	switch protocol {
	case "openai-chat", "ollama":
		for _, t := range ts {
			out = append(out, map[string]any{"type": "function", "function": fn(t)})
		}
	case "openai-responses":
		for _, t := range ts {
			f := fn(t)
			f["type"] = "function"
			out = append(out, f)
		}
	case "anthropic":
		for _, t := range ts {
			d := map[string]any{"name": t.Name, "input_schema": schema(t)}
			if t.Description != "" {
				d["description"] = t.Description
			}
			out = append(out, d)
		}
	case "gemini":
		decls := make([]any, 0, len(ts))
		for _, t := range ts {
			decls = append(decls, fn(t))
		}
		return []any{map[string]any{"functionDeclarations": decls}}, true
	default:
		return nil, false
	}
	return out, true
}
