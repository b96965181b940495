// llm-sim: --model sim-large=demo --seed 1
// Prefix cache and conversations. Two prompt sets that differ in one thing: both start
// with one of two 1500-token system prompts, but the second puts a unique nonce in
// front of each draw, as a timestamp or request id early in a real prompt does. A
// third set is conversations whose history grows turn by turn. Compare
// llm_ttft{cache_case:shared} with {cache_case:busted}, and llm_ttft by turn.
//
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/cache-and-turns.js
import { Client, Dataset } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-large',
  name: 'cache',
  gapSamples: 'request',
});

const prefix = { count: 2, tokens: 1500, fraction: 1 };
const shared = Dataset.synthetic({ seed: 1, mix: { medium: 1 }, sharedPrefix: prefix });
const busted = Dataset.synthetic({ seed: 1, mix: { medium: 1 }, sharedPrefix: prefix, cacheBust: true });
const chats = Dataset.synthetic({ seed: 3, mix: { short: 1 }, turns: { min: 2, max: 4 } });

export const options = {
  vus: 4,
  duration: __ENV.DURATION || '30s',
  thresholds: {
    // The first calls warm the cache; after them most shared-prefix calls hit it.
    'llm_cache_hit{cache_case:shared}': ['rate>0.3'],
    // A nonce in front of the prompt: nothing can hit.
    'llm_cache_hit{cache_case:busted}': ['rate<0.05'],
    llm_failed: ['rate<0.01'],
  },
};

export default async function () {
  const a = shared.next();
  await client.chat({ messages: a.messages, max_tokens: 24 },
    { item: a, tags: { cache_case: 'shared' } });
  const b = busted.next();
  await client.chat({ messages: b.messages, max_tokens: 24 },
    { item: b, tags: { cache_case: 'busted' } });
  const c = chats.next(); // turn n carries turns 1..n−1 and their answers
  await client.chat({ messages: c.messages, max_tokens: 24 }, { item: c }); // tags category and turn
}
