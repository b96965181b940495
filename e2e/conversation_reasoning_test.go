package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// reasoningScript runs, per protocol llm-sim streams reasoning in and per
// reasoning policy, a 3-turn conversation and an agent job of one tool
// round, every answer reasoning first (X-Sim-Reasoning; Anthropic's with a
// redacted block too). Each job has its own session key (protocol/policy/
// kind), so the test can tell its requests apart in llm-sim's trace.
const reasoningScript = `
import { Client } from 'k6/x/llmstream';

const SIM = __ENV.SIM_URL;
const clients = {
  'openai-chat': new Client({ protocol: 'openai-chat', baseURL: SIM + '/v1', model: 'sim' }),
  'anthropic': new Client({ protocol: 'anthropic', baseURL: SIM + '/v1', model: 'sim' }),
  'gemini': new Client({ protocol: 'gemini', baseURL: SIM + '/v1beta', model: 'sim' }),
  'ollama': new Client({ protocol: 'ollama', baseURL: SIM, model: 'sim' }),
  'openai-responses': new Client({ protocol: 'openai-responses', baseURL: SIM + '/v1', model: 'sim' }),
};
const bodies = {
  'openai-chat': { max_tokens: 40 }, 'anthropic': { max_tokens: 40 }, 'gemini': { generationConfig: { maxOutputTokens: 40 } },
  'ollama': { options: { num_predict: 40 } }, 'openai-responses': { max_output_tokens: 40 },
};
const reasoningHeader = (p) => (p === 'anthropic' ? '6,redacted' : '6');
const city = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

export const options = { iterations: 1 };

export default async function () {
  for (const [p, c] of Object.entries(clients)) {
    for (const policy of ['send', 'drop']) {
      const common = (kind) => ({ body: bodies[p], reasoning: policy, session: { header: 'X-Session-Affinity', key: [p, policy, kind].join('/') } });
      const conv = c.conversation(Object.assign({ params: { headers: { 'X-Sim-Reasoning': reasoningHeader(p) } } }, common('conversation')));
      let ok = true;
      for (const q of ['Why is the sky blue?', 'And at sunset?', 'On Mars?']) {
        const r = await conv.say(q);
        ok = ok && r !== null && r.ok && r.reasoningText.length > 0
          && r.reasoningTime !== null && r.reasoningTime >= 0 && Math.abs(r.ttft + r.reasoningTime - r.ttftAnswer) < 1e-6;
      }
      const job = conv.end();
      console.log(JSON.stringify({ kind: 'conversation', proto: p, policy, session: conv.session, ok: ok && job.ok }));

      const agent = c.agent(Object.assign({
        params: { headers: { 'X-Sim-Reasoning': reasoningHeader(p), 'X-Sim-Tool-Calls': '1' } },
        tools: { weather: { run: ({ city }) => 'sunny in ' + city, parameters: city } },
      }, common('agent')));
      const j = await agent.run('What is the weather in Oslo?');
      console.log(JSON.stringify({ kind: 'agent', proto: p, policy, session: [p, policy, 'agent'].join('/'), ok: j.ok, error: j.error }));
    }
  }
}
`

type reasoningLog struct {
	Kind    string `json:"kind"`
	Proto   string `json:"proto"`
	Policy  string `json:"policy"`
	Session string `json:"session"`
	OK      bool   `json:"ok"`
	Error   *struct {
		Type string `json:"type"`
	} `json:"error"`
}

type reasoningTrace struct {
	ArrivalNS  int64             `json:"arrival_ns"`
	Status     int               `json:"status"`
	Reasoning  string            `json:"reasoning"`
	Signatures []string          `json:"signatures"`
	Body       map[string]any    `json:"body"`
	Headers    map[string]string `json:"headers"`
}

// sentReasoning is the reasoning and signatures a request's history carries,
// in order, each protocol's fields read.
func sentReasoning(proto string, body map[string]any) (texts, sigs []string) {
	list := func(v any) []map[string]any {
		var out []map[string]any
		if a, ok := v.([]any); ok {
			for _, e := range a {
				if m, ok := e.(map[string]any); ok {
					out = append(out, m)
				}
			}
		}
		return out
	}
	str := func(v any) string { s, _ := v.(string); return s }
	switch proto {
	case "openai-chat", "ollama":
		field := map[string]string{"openai-chat": "reasoning_content", "ollama": "thinking"}[proto]
		for _, m := range list(body["messages"]) {
			if s := str(m[field]); m["role"] == "assistant" && s != "" {
				texts = append(texts, s)
			}
		}
	case "anthropic":
		for _, m := range list(body["messages"]) {
			for _, b := range list(m["content"]) {
				switch b["type"] {
				case "thinking":
					texts, sigs = append(texts, str(b["thinking"])), append(sigs, str(b["signature"]))
				case "redacted_thinking":
					sigs = append(sigs, str(b["data"]))
				}
			}
		}
	case "gemini":
		for _, c := range list(body["contents"]) {
			for _, p := range list(c["parts"]) {
				if p["thought"] == true {
					texts = append(texts, str(p["text"]))
				}
				if s := str(p["thoughtSignature"]); s != "" {
					sigs = append(sigs, s)
				}
			}
		}
	case "openai-responses":
		for _, it := range list(body["input"]) {
			if it["type"] == "reasoning" {
				var b strings.Builder
				for _, s := range list(it["summary"]) {
					b.WriteString(str(s["text"]))
				}
				texts, sigs = append(texts, b.String()), append(sigs, str(it["encrypted_content"]))
			}
		}
	}
	return texts, sigs
}

// TestReasoningRoundTripAgainstLLMSim: with reasoning 'send', every request
// of a conversation or agent job carries the reasoning and signatures
// llm-sim streamed in that job's earlier answers, exactly (its trace holds
// both sides); with 'drop', none, and the APIs that require a tool-use
// turn's reasoning back (Anthropic, Gemini) refuse the agent's second step
// with a 400, which ends its job classified.
func TestReasoningRoundTripAgainstLLMSim(t *testing.T) {
	tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
	url := startSim(t, "--model", "sim=fast", "--seed", "3", "--trace", tracePath, "--trace-bodies")
	script := filepath.Join(t.TempDir(), "reasoning.js")
	require.NoError(t, os.WriteFile(script, []byte(reasoningScript), 0o600))
	code, out := runK6(t, script, map[string]string{"SIM_URL": url}, "--log-format", "json")
	require.Equal(t, 0, code, out)

	jobs := map[string]reasoningLog{} // by session
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct{ Msg, Source string }
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Source != "console" {
			continue
		}
		var l reasoningLog
		require.NoError(t, json.Unmarshal([]byte(line.Msg), &l), line.Msg)
		jobs[l.Session] = l
	}
	require.Len(t, jobs, 20, "5 protocols × 2 policies × (a conversation and an agent job)")

	data, err := os.ReadFile(tracePath) //nolint:gosec // the test's own file
	require.NoError(t, err)
	bySession := map[string][]reasoningTrace{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var tr reasoningTrace
		require.NoError(t, json.Unmarshal([]byte(line), &tr))
		s := tr.Headers["X-Session-Affinity"]
		bySession[s] = append(bySession[s], tr)
	}
	for session, j := range jobs {
		reqs := bySession[session]
		sort.Slice(reqs, func(a, b int) bool { return reqs[a].ArrivalNS < reqs[b].ArrivalNS })
		what := j.Proto + " " + j.Kind + " " + j.Policy
		refused := j.Kind == "agent" && j.Policy == "drop" && (j.Proto == "anthropic" || j.Proto == "gemini")
		if refused {
			require.False(t, j.OK, what)
			require.NotNil(t, j.Error, what)
			require.Equal(t, "http_4xx", j.Error.Type, what)
			require.Len(t, reqs, 2, what)
			require.Equal(t, 400, reqs[1].Status, what)
		} else {
			require.True(t, j.OK, "%s: %+v", what, j.Error)
			require.Len(t, reqs, map[string]int{"conversation": 3, "agent": 2}[j.Kind], what)
		}
		var wantTexts, wantSigs []string
		for i, r := range reqs {
			texts, sigs := sentReasoning(j.Proto, r.Body)
			if j.Policy == "drop" {
				require.Empty(t, texts, "%s request %d", what, i+1)
				require.Empty(t, sigs, "%s request %d", what, i+1)
			} else {
				require.Equal(t, wantTexts, texts, "%s request %d: the reasoning as streamed", what, i+1)
				require.Equal(t, wantSigs, sigs, "%s request %d: the signatures as streamed", what, i+1)
			}
			if r.Status != 200 {
				continue
			}
			require.NotEmpty(t, r.Reasoning, "%s request %d streamed reasoning", what, i+1)
			wantTexts = append(wantTexts, r.Reasoning)
			wantSigs = append(wantSigs, r.Signatures...)
		}
	}
}
