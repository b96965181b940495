// llm-sim: --model sim=demo --set prefill_per_token_ms=0.15 --seed 1
// Warm-up (docs/guide.md#drift): each call asks about one of 64 documents of ~2000 words, in
// order, then starts over. The first pass finds the prefix cache cold: ~0.4 s of
// prefill each, queued behind each other, for about 25 s. From the second pass on
// every document is cached, so TTFT at the same 8 VUs falls by an order of
// magnitude: the early third of the run is not like the late one.
import exec from 'k6/execution';
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });

const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike'.split(' ');
const body = [];
for (let i = 0; i < 2000; i++) body.push(words[(i * 7) % words.length]);
const text = body.join(' ');

export const options = { vus: 8, duration: '65s' }; // the rule looks at ≥ 60 s of steady load

export default async function () {
  const doc = exec.scenario.iterationInTest % 64;
  await client.chat({ messages: [{ role: 'user', content: `Document ${doc}. ${text}` }], max_tokens: 16 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
