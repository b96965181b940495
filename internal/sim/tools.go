package sim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Tool calls on demand. A request that declares tools and carries
// X-Sim-Tool-Calls is answered with tool calls instead of text, for as many
// tool rounds as the header lists: "2,1" answers the first request with two
// parallel calls, the request that brings their results back with one call,
// and the one after that with text. llm-sim keeps no state between requests:
// the round is the number of tool-call answers in the request's history since
// its last user turn. The calls are a function of the seed, the prompt and
// the round, as the text is.

// ToolCallsHeader lists the calls per tool round ("2,1": two parallel calls,
// then one, then text).
const ToolCallsHeader = "X-Sim-Tool-Calls"

// ToolFaultHeader makes the first call of each tool round a bad one:
// "unknown_tool" names a tool the request did not declare,
// "malformed_arguments" cuts its arguments short of valid JSON.
const ToolFaultHeader = "X-Sim-Tool-Fault"

// UnknownToolName is the name an unknown_tool fault calls.
const UnknownToolName = "llm_sim_unknown_tool"

// toolFinish is the engine's finish reason of a tool-call answer; each
// renderer names it as its API does (tool_calls, tool_use, STOP, stop).
const toolFinish = "tool_calls"

// argFragmentBytes is how much of a call's arguments one output token
// carries: tool arguments stream in small pieces, as models emit them.
const argFragmentBytes = 4

// declaredTool is a tool the request declares: its name and the property
// names and types of its parameters' schema.
type declaredTool struct {
	Name  string
	Props map[string]string // property name → JSON schema type
}

// toolHistory is what a request says about tools: the tools it declares and
// how many tool-call answers its history holds since the last user turn.
type toolHistory struct {
	tools  []declaredTool
	rounds int
}

// toolRequestReader reads a protocol's tool declarations and history.
type toolRequestReader interface {
	toolHistory(body []byte) (toolHistory, *apiError)
}

// toolStreamer renders a tool-call answer in a protocol's stream.
type toolStreamer interface {
	toolStream(m *respMeta, plan *toolPlan) streamRenderer
}

// simToolCall is one planned call.
type simToolCall struct {
	ID, Name, Args string
}

// toolFragment is one output token of a tool-call answer: a piece of call
// Call's arguments.
type toolFragment struct {
	Call int
	Text string
}

// toolPlan is a tool-call answer: its calls and their arguments cut into
// output tokens, in order (call 0's, then call 1's: parallel calls stream one
// after the other, as the APIs send them).
type toolPlan struct {
	calls []simToolCall
	frags []toolFragment
	// skip is the reasoning tokens before the calls (reasoning.go): output
	// token skip is the calls' first.
	skip int
}

// toolRequest is what X-Sim-Tool-Calls and X-Sim-Tool-Fault ask for.
type toolRequest struct {
	perRound []int
	fault    string
}

func parseToolRequest(h http.Header) (*toolRequest, error) {
	v := strings.TrimSpace(strings.Join(h.Values(ToolCallsHeader), ","))
	if v == "" {
		if h.Get(ToolFaultHeader) != "" {
			return nil, fmt.Errorf("%s needs %s", ToolFaultHeader, ToolCallsHeader)
		}
		return nil, nil //nolint:nilnil // no tool calls asked for
	}
	rounds, err := parseToolRounds(v)
	if err != nil {
		return nil, fmt.Errorf("%s %w", ToolCallsHeader, err)
	}
	tr := &toolRequest{perRound: rounds}
	switch f := strings.TrimSpace(h.Get(ToolFaultHeader)); f {
	case "", "unknown_tool", "malformed_arguments":
		tr.fault = f
	default:
		return nil, fmt.Errorf("%s must be 'unknown_tool' or 'malformed_arguments', got %q", ToolFaultHeader, f)
	}
	return tr, nil
}

// parseToolRounds reads calls per round: "2,1".
func parseToolRounds(v string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 64 {
			return nil, fmt.Errorf("must list calls per round as integers 1..64 (e.g. \"2,1\"), got %q", v)
		}
		out = append(out, n)
	}
	return out, nil
}

// toolAnswer is the plan of a request's tool-call answer, or nil when it is
// answered with text (no tool calls asked for, or every round done).
// A model's tool_calls default is a default, not a request: a request it
// cannot apply to (not streamed, no tools, a protocol without tools) is
// answered with text rather than refused.
func toolAnswer(p protocol, r *http.Request, body []byte, seed uint64, id string, stream bool, byDefault string) (*toolPlan, *apiError) {
	tr, err := parseToolRequest(r.Header)
	if err != nil {
		return nil, badRequest(ToolCallsHeader, err.Error())
	}
	asked := tr != nil
	if !asked {
		if byDefault == "" {
			return nil, nil
		}
		rounds, _ := parseToolRounds(byDefault) // checked with the config
		tr = &toolRequest{perRound: rounds}
	}
	refuse := func(param, msg string) (*toolPlan, *apiError) {
		if !asked {
			return nil, nil
		}
		return nil, badRequest(param, msg)
	}
	if !stream {
		return refuse(ToolCallsHeader, "llm-sim answers with tool calls in streamed requests only")
	}
	reader, ok := p.(toolRequestReader)
	if _, streams := p.(toolStreamer); !ok || !streams {
		return refuse(ToolCallsHeader, "llm-sim answers with tool calls in openai-chat, openai-responses, anthropic, gemini and ollama chat, not in "+p.name())
	}
	th, aerr := reader.toolHistory(body)
	if aerr != nil {
		return refuse(aerr.Param, aerr.Message)
	}
	if len(th.tools) == 0 {
		return refuse("tools", ToolCallsHeader+" asks for tool calls but the request declares no tools")
	}
	if th.rounds >= len(tr.perRound) {
		return nil, nil
	}
	return planTools(th.tools, tr.perRound[th.rounds], th.rounds, tr.fault, seed, id), nil
}

// planTools draws n calls of round: distinct tools while there are enough,
// each with arguments for its schema.
func planTools(tools []declaredTool, n, round int, fault string, seed uint64, id string) *toolPlan {
	seed = splitmix64(seed ^ uint64(round+1)*0x746f6f6c) // #nosec G115 -- round >= 0
	first := int(seed % uint64(len(tools)))              // #nosec G115 -- len > 0
	plan := &toolPlan{}
	for k := range n {
		t := tools[(first+k)%len(tools)]
		c := simToolCall{
			ID:   "call_" + id + "_" + strconv.Itoa(round) + "_" + strconv.Itoa(k),
			Name: t.Name, Args: toolArguments(t, splitmix64(seed+uint64(k))), // #nosec G115 -- k >= 0
		}
		if k == 0 {
			switch fault {
			case "unknown_tool":
				c.Name = UnknownToolName
			case "malformed_arguments":
				c.Args = c.Args[:len(c.Args)/2]
			}
		}
		plan.calls = append(plan.calls, c)
		plan.frags = append(plan.frags, fragments(k, c.Args)...)
	}
	return plan
}

// toolArguments is a JSON object with a value of its type for each of the
// schema's properties (a "query" string when the schema names none).
func toolArguments(t declaredTool, seed uint64) string {
	props := t.Props
	if len(props) == 0 {
		props = map[string]string{"query": "string"}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	args := make(map[string]any, len(names))
	for i, n := range names {
		s := splitmix64(seed ^ uint64(i+1)) // #nosec G115 -- i >= 0
		switch props[n] {
		case "integer":
			args[n] = s % 100
		case "number":
			args[n] = float64(s%1000) / 10
		case "boolean":
			args[n] = s%2 == 0
		case "array":
			args[n] = []any{}
		case "object":
			args[n] = map[string]any{}
		default:
			args[n] = strings.TrimSpace(string(appendWords(nil, s, 0, 2)))
		}
	}
	return string(mustJSON(args))
}

// fragments cuts a call's arguments into output tokens (at least one, so an
// empty argument string still announces its call).
func fragments(call int, args string) []toolFragment {
	var out []toolFragment
	for len(args) > argFragmentBytes {
		cut := argFragmentBytes
		for cut > 0 && !utf8.RuneStart(args[cut]) {
			cut--
		}
		if cut == 0 {
			cut = argFragmentBytes
		}
		out = append(out, toolFragment{call, args[:cut]})
		args = args[cut:]
	}
	return append(out, toolFragment{call, args})
}

// toolSpan is one call's fragments within an engine step.
type toolSpan struct {
	call   int
	text   string
	tokens int
	first  bool // the call's first fragment: the event announces it
	last   bool // the call's last fragment
}

// spans groups output tokens [from, to) of the plan by call.
func (p *toolPlan) spans(from, to int) []toolSpan {
	from, to = max(from-p.skip, 0), to-p.skip
	var out []toolSpan
	for i := from; i < to && i < len(p.frags); i++ {
		f := p.frags[i]
		first := i == 0 || p.frags[i-1].Call != f.Call
		last := i == len(p.frags)-1 || p.frags[i+1].Call != f.Call
		if n := len(out); n > 0 && out[n-1].call == f.Call {
			s := &out[n-1]
			s.text += f.Text
			s.tokens++
			s.last = last
			continue
		}
		out = append(out, toolSpan{call: f.Call, text: f.Text, tokens: 1, first: first, last: last})
	}
	return out
}

// length is the answer's output tokens and finish reason: the calls'
// tokens, or maxTokens when the calls are longer ("length", the calls cut).
func (p *toolPlan) length(maxTokens int) (int, string) {
	if len(p.frags) > maxTokens {
		p.cut(maxTokens)
		return maxTokens, "length"
	}
	return len(p.frags), toolFinish
}

// cut keeps the first n output tokens (max_tokens reached mid-call): the
// calls past it are dropped and the last one's arguments end where the
// answer did.
func (p *toolPlan) cut(n int) {
	if n >= len(p.frags) {
		return
	}
	p.frags = p.frags[:n]
	last := p.frags[n-1].Call
	p.calls = p.calls[:last+1]
	var sb strings.Builder
	for _, f := range p.frags {
		if f.Call == last {
			sb.WriteString(f.Text)
		}
	}
	p.calls[last].Args = sb.String()
}

// declaredProps reads a JSON schema's property types.
func declaredProps(schema json.RawMessage) map[string]string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if len(schema) == 0 || json.Unmarshal(schema, &s) != nil {
		return nil
	}
	props := make(map[string]string, len(s.Properties))
	for n, p := range s.Properties {
		t, _ := p.Type.(string)
		props[n] = strings.ToLower(t) // Gemini writes STRING, INTEGER…
	}
	return props
}
