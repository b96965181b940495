package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// agentScript runs, per tool-capable protocol, an agent job that llm-sim
// answers with two tool rounds (two parallel calls, then one) and then
// text, a job whose tool throws, one whose model never stops calling tools
// (the step limit), one whose async tool rejects, and one whose model calls
// a tool it was not given. The
// tools take a known time, so the job's tool time is checked against it;
// thresholds on the job metrics per protocol prove the samples went out.
const agentScript = `
import { Client } from 'k6/x/llmstream';
import { check, sleep } from 'k6';

const SIM = __ENV.SIM_URL;
const TOOL_MS = 60;
// Date.now() counts whole ms: a busy wait of ms can take ms − 1 by the clock the client reads.
const busy = (ms) => { const t = Date.now(); while (Date.now() - t < ms) {} };

const clients = {
  'openai-chat': new Client({ name: 'openai-chat', protocol: 'openai-chat', baseURL: SIM + '/v1', model: 'sim' }),
  'openai-responses': new Client({ name: 'openai-responses', protocol: 'openai-responses', baseURL: SIM + '/v1', model: 'sim' }),
  'anthropic': new Client({ name: 'anthropic', protocol: 'anthropic', baseURL: SIM + '/v1', model: 'sim' }),
  'gemini': new Client({ name: 'gemini', protocol: 'gemini', baseURL: SIM + '/v1beta', model: 'sim' }),
  'ollama': new Client({ name: 'ollama', protocol: 'ollama', baseURL: SIM, model: 'sim' }),
};
const maxTokens = {
  'openai-chat': { max_tokens: 200 }, 'anthropic': { max_tokens: 200 },
  'openai-responses': { max_output_tokens: 200 }, 'gemini': { generationConfig: { maxOutputTokens: 200 } },
  'ollama': { options: { num_predict: 200 } },
};
const city = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

const thresholds = {};
for (const p of Object.keys(clients)) {
  thresholds['llm_jobs{protocol:' + p + ',job:agent}'] = ['count==5'];
  thresholds['llm_job_failed{protocol:' + p + ',job:agent}'] = ['rate==0.6'];
  thresholds['llm_job_steps{protocol:' + p + ',job:agent}'] = ['max==3'];
  thresholds['llm_job_bad_tool_calls{protocol:' + p + ',job:agent}'] = ['max==1', 'avg==0.2'];
  thresholds['llm_job_tool_time{protocol:' + p + ',job:agent}'] = ['max>=' + 2 * (TOOL_MS - 1)];
  thresholds['checks{protocol:' + p + '}'] = ['rate==1'];
}
export const options = { iterations: 1, thresholds };

function agent(c, p, calls, extra) {
  return c.agent(Object.assign({
    body: maxTokens[p],
    params: { headers: { 'X-Sim-Tool-Calls': calls } },
    tools: {
      weather: { run: ({ city }) => { busy(TOOL_MS); return 'sunny in ' + city; }, description: 'the weather in a city', parameters: city },
      clock: { run: async () => { busy(TOOL_MS); return { time: '12:00' }; } },
    },
  }, extra || {}));
}

export default async function () {
  for (const [p, c] of Object.entries(clients)) {
    const tags = { protocol: p };
    const ok = await agent(c, p, '2,1').run('What is the weather in Oslo and the time there?');
    check(ok, {
      'two rounds: ok': (j) => j.ok && j.error === null,
      'two rounds: 3 steps': (j) => j.steps === 3 && j.rounds === 2,
      'two rounds: kind agent': (j) => j.kind === 'agent',
      'two rounds: tool time': (j) => j.toolTime >= 2 * (TOOL_MS - 1) && j.toolTime < j.duration,
      'two rounds: model time': (j) => j.modelTime > 0 && j.modelTime + j.toolTime <= j.duration + 1,
      'two rounds: text': (j) => typeof j.text === 'string' && j.text.length > 0,
      'two rounds: each call timed': (j) => j.toolCalls.length === 3 && j.toolCalls.every((c) => c.ok && c.time >= TOOL_MS - 1)
        && j.toolCalls.filter((c) => c.step === 1).length === 2 && j.toolCalls.filter((c) => c.step === 2).length === 1,
      'two rounds: no findings': (j) => j.findings.length === 0 && j.badToolCalls === 0,
    }, tags);
    if (!ok.ok) console.error(p + ': ' + JSON.stringify(ok));

    const thrown = await agent(c, p, '2', { tools: { weather: () => { throw new Error('weather service down'); }, clock: { result: 'noon' } } })
      .run('weather?');
    check(thrown, {
      'throw: failed': (j) => !j.ok,
      'throw: classified': (j) => j.error.type === 'tool_error' && j.endReason === 'tool_error',
      'throw: message': (j) => j.error.message.includes('weather service down') && j.error.tool === 'weather',
      'throw: the call not ok': (j) => j.toolCalls.some((c) => c.name === 'weather' && !c.ok),
    }, tags);

    const rejected = await agent(c, p, '2', { tools: { weather: { result: 'sunny' }, clock: async () => { throw new Error('clock skew'); } } })
      .run('time?');
    check(rejected, {
      'reject: classified': (j) => !j.ok && j.error.type === 'tool_error' && j.error.tool === 'clock',
      'reject: message': (j) => j.error.message.includes('clock skew'),
    }, tags);

    const limited = await agent(c, p, '1,1,1,1', { maxSteps: 2 }).run('loop');
    check(limited, {
      'limit: failed': (j) => !j.ok && j.error.type === 'step_limit' && j.endReason === 'step_limit',
      'limit: 2 steps': (j) => j.steps === 2,
    }, tags);

    const unknown = await c.agent({
      body: maxTokens[p],
      params: { headers: { 'X-Sim-Tool-Calls': '2', 'X-Sim-Tool-Fault': 'unknown_tool' } },
      tools: { weather: { result: 'sunny', latency: '20ms' }, clock: { result: 'noon' } },
    }).run('anything');
    check(unknown, {
      'unknown tool: reported, not a crash': (j) => j.ok && j.findings.length === 1 && j.badToolCalls === 1,
      'unknown tool: named': (j) => j.findings[0].kind === 'unknown_tool' && j.findings[0].tool === 'llm_sim_unknown_tool',
    }, tags);
  }
}
`

// TestAgentJobsAgainstLLMSim runs agent jobs per tool-capable protocol.
func TestAgentJobsAgainstLLMSim(t *testing.T) {
	t.Parallel()
	url := startSim(t, "--model", "sim=fast", "--seed", "1")
	script := filepath.Join(t.TempDir(), "agent.js")
	require.NoError(t, os.WriteFile(script, []byte(agentScript), 0o600))
	code, out := runK6(t, script, map[string]string{"SIM_URL": url})
	require.Equal(t, 0, code, out)
	for _, p := range []string{"openai-chat", "openai-responses", "anthropic", "gemini", "ollama"} {
		require.True(t, strings.Contains(out, "llm_job_tool_time{protocol:"+p+",job:agent}"), "threshold for %s in the summary:\n%s", p, out)
	}
}
