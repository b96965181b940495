// llm-sim: --model sim=demo --set prefill_per_token_ms=0.5 --set prefix_cache=false --seed 1
// Head-of-line blocking (docs/guide.md#head_of_line): one VU sends a ~3000-token prompt every few
// seconds, whose prefill takes ~2 s in one engine step (no chunked prefill);
// sixteen VUs ask one-token questions with 1–3 s of think time, so short
// requests keep arriving during that step (and do not all arrive at once
// after it). A short request that arrives during the step waits for it.
import { sleep } from 'k6';
import exec from 'k6/execution';
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });

const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike'.split(' ');
function longPrompt(n) {
  const out = [`Document ${n}.`]; // a new first line each time: nothing to reuse
  for (let i = 0; i < 3000; i++) out.push(words[(i * 7 + n) % words.length]);
  return out.join(' ');
}

export const options = {
  scenarios: {
    short: { executor: 'constant-vus', vus: 16, duration: '24s', exec: 'short' },
    long: { executor: 'constant-vus', vus: 1, duration: '24s', exec: 'long' },
  },
};

export async function short() {
  await client.chat({ messages: [{ role: 'user', content: 'What time is it in Paris?' }], max_tokens: 1 },
    { tags: { category: 'short' } });
  sleep(1 + 2 * Math.random());
}

export async function long() {
  await client.chat({ messages: [{ role: 'user', content: longPrompt(exec.scenario.iterationInTest) }], max_tokens: 1 },
    { tags: { category: 'long_context' } });
  sleep(3);
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
