package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// conversationScript holds one 4-turn live conversation per protocol
// llm-sim speaks in each of two VUs, with think time and a session header,
// and logs what each turn streamed (by request id) and each job's figures.
const conversationScript = `
import { Client } from 'k6/x/llmstream';
import { check } from 'k6';

const SIM = __ENV.SIM_URL;
const THINK = 300;
const clients = {
  'openai-chat': new Client({ protocol: 'openai-chat', baseURL: SIM + '/v1', model: 'sim' }),
  'anthropic': new Client({ protocol: 'anthropic', baseURL: SIM + '/v1', model: 'sim' }),
  'gemini': new Client({ protocol: 'gemini', baseURL: SIM + '/v1beta', model: 'sim' }),
  'ollama': new Client({ protocol: 'ollama', baseURL: SIM, model: 'sim' }),
  'openai-responses': new Client({ protocol: 'openai-responses', baseURL: SIM + '/v1', model: 'sim' }),
};
const bodies = {
  'openai-chat': { max_tokens: 8 }, 'anthropic': { max_tokens: 8 }, 'gemini': { generationConfig: { maxOutputTokens: 8 } },
  'ollama': { options: { num_predict: 8 } }, 'openai-responses': { max_output_tokens: 8 },
};

export const options = {
  scenarios: { users: { executor: 'per-vu-iterations', vus: 2, iterations: 1 } },
  thresholds: { checks: ['rate==1'], 'llm_jobs{job:conversation}': ['count==10'] },
};

export default async function () {
  await Promise.all(Object.keys(clients).map(async (proto) => {
    const conv = clients[proto].conversation({ system: 'Answer briefly.', body: bodies[proto], think: THINK + 'ms',
      session: { header: 'X-Session-Affinity' } });
    const ttfts = [];
    for (const q of ['Why is the sky blue?', 'And at sunset?', 'What about Mars?', 'Thanks, one more?']) {
      const r = await conv.say(q);
      check(r, { ok: (r) => r !== null && r.ok }, { proto });
      if (r === null || !r.ok) { console.error(proto + ': ' + JSON.stringify(r && r.error)); break; }
      ttfts.push(r.ttft);
      console.log(JSON.stringify({ kind: 'turn', proto, session: conv.session, requestId: r.requestId, turn: r.turn, text: r.text }));
    }
    const job = conv.end();
    console.log(JSON.stringify({ kind: 'job', proto, session: conv.session, job, ttfts }));
  }));
}
`

type convLog struct {
	Kind      string    `json:"kind"`
	Proto     string    `json:"proto"`
	Session   string    `json:"session"`
	RequestID string    `json:"requestId"`
	Turn      int       `json:"turn"`
	Text      string    `json:"text"`
	TTFTs     []float64 `json:"ttfts"`
	Job       struct {
		OK        bool    `json:"ok"`
		Turns     int     `json:"turns"`
		Duration  float64 `json:"duration"`
		ModelTime float64 `json:"modelTime"`
		ThinkTime float64 `json:"thinkTime"`
	} `json:"job"`
}

type convTrace struct {
	RequestID string            `json:"request_id"`
	Body      map[string]any    `json:"body"`
	Headers   map[string]string `json:"headers"`
}

// assistantTexts are the earlier answers a request carries, in each
// protocol's own history shape.
func assistantTexts(proto string, body map[string]any) []string {
	out := []string{}
	text := func(v any) string {
		if s, ok := v.(string); ok {
			return s
		}
		var b strings.Builder
		for _, p := range v.([]any) {
			if s, ok := p.(map[string]any)["text"].(string); ok {
				b.WriteString(s)
			}
		}
		return b.String()
	}
	switch proto {
	case "gemini":
		for _, c := range body["contents"].([]any) {
			if m := c.(map[string]any); m["role"] == "model" {
				out = append(out, text(m["parts"]))
			}
		}
	case "openai-responses":
		for _, c := range body["input"].([]any) {
			if m := c.(map[string]any); m["role"] == "assistant" {
				out = append(out, text(m["content"]))
			}
		}
	default:
		for _, c := range body["messages"].([]any) {
			if m := c.(map[string]any); m["role"] == "assistant" {
				out = append(out, text(m["content"]))
			}
		}
	}
	return out
}

// TestConversationAgainstLLMSim: in a 4-turn conversation per protocol,
// each request carries the earlier answers exactly as they streamed
// (checked against llm-sim's trace of the bodies), the session header
// reaches the server on every turn and differs between conversations, and
// think time is in the job's time and not in any TTFT.
func TestConversationAgainstLLMSim(t *testing.T) {
	t.Parallel()
	tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
	url := startSim(t, "--model", "sim=fast", "--seed", "1", "--trace", tracePath, "--trace-bodies")
	script := filepath.Join(t.TempDir(), "conversation.js")
	require.NoError(t, os.WriteFile(script, []byte(conversationScript), 0o600))
	code, out := runK6(t, script, map[string]string{"SIM_URL": url}, "--log-format", "json")
	require.Equal(t, 0, code, out)

	turns := map[string]convLog{} // by request id
	var jobs []convLog
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct{ Msg, Source string }
		if json.Unmarshal(sc.Bytes(), &line) != nil || line.Source != "console" {
			continue
		}
		var l convLog
		require.NoError(t, json.Unmarshal([]byte(line.Msg), &l), line.Msg)
		if l.Kind == "turn" {
			turns[l.RequestID] = l
		} else {
			jobs = append(jobs, l)
		}
	}
	require.Len(t, turns, 40, "5 protocols × 2 conversations × 4 turns")
	require.Len(t, jobs, 10)

	data, err := os.ReadFile(tracePath) //nolint:gosec // the test's own file
	require.NoError(t, err)
	sessions := map[string]string{}  // session → protocol
	answers := map[string][]string{} // session → its answers in turn order
	for _, l := range turns {
		a := answers[l.Session]
		for len(a) < l.Turn {
			a = append(a, "")
		}
		a[l.Turn-1] = l.Text
		answers[l.Session] = a
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var tr convTrace
		require.NoError(t, json.Unmarshal([]byte(line), &tr))
		l, ok := turns[tr.RequestID]
		require.True(t, ok, "a request no turn logged: %s", tr.RequestID)
		require.Equal(t, l.Session, tr.Headers["X-Session-Affinity"], "%s turn %d: the session header", l.Proto, l.Turn)
		if p, seen := sessions[l.Session]; seen {
			require.Equal(t, p, l.Proto, "one session per conversation")
		}
		sessions[l.Session] = l.Proto
		require.Equal(t, answers[l.Session][:l.Turn-1], assistantTexts(l.Proto, tr.Body),
			"%s turn %d carries the earlier answers as streamed", l.Proto, l.Turn)
	}
	require.Len(t, sessions, 10, "every conversation its own session key")

	for _, j := range jobs {
		require.True(t, j.Job.OK, j.Proto)
		require.Equal(t, 4, j.Job.Turns, j.Proto)
		require.GreaterOrEqual(t, j.Job.ThinkTime, 3*300.0, "%s: three pauses", j.Proto)
		require.GreaterOrEqual(t, j.Job.Duration, j.Job.ThinkTime+j.Job.ModelTime-1, j.Proto)
		for _, ttft := range j.TTFTs {
			require.Less(t, ttft, 300.0, "%s: no pause inside a TTFT", j.Proto)
		}
	}
}
