// llm-sim: --model sim-large=demo --model sim-small=fast --seed 1
// Route small requests to a small model and shadow a share of them to the large one.
// Short prompts go to the small model, the rest to the large one; one short call in
// four is also sent, at the same moment, to the large model as shadow traffic, whose
// answer is measured but not used. Every sample carries the client's name, so the
// two paths have their own thresholds and rows.
//
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/route-and-shadow.js
import { Client, Dataset } from 'k6/x/llmstream';

const base = __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1';
const small = new Client({ baseURL: base, model: 'sim-small', name: 'small', gapSamples: 'request' });
const large = new Client({ baseURL: base, model: 'sim-large', name: 'large', gapSamples: 'request' });

const prompts = Dataset.synthetic({ seed: 5, mix: { short: 3, medium: 1 } });

export const options = {
  vus: 4,
  duration: __ENV.DURATION || '30s',
  thresholds: {
    'llm_ttft{name:small}': ['p(95)<1000'],
    'llm_ttft{name:large}': ['p(95)<3000'],
    'llm_failed{shadow:no}': ['rate<0.01'],
  },
};

let n = 0;

export default async function () {
  const p = prompts.next();
  const body = { messages: p.messages, max_tokens: 32 };
  if (p.category !== 'short') {
    await large.chat(body, { item: p, tags: { shadow: 'no' } });
    return;
  }
  const calls = [small.chat(body, { item: p, tags: { shadow: 'no' } })];
  if (n++ % 4 === 0) {
    calls.push(large.chat(body, { item: p, tags: { shadow: 'yes' } })); // measured, not used
  }
  await Promise.all(calls);
}
