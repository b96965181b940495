// The smallest useful test: a few VUs stream chat answers from an OpenAI-compatible
// server and k6 checks time to first token, decode speed and failures.
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/quickstart.js
import { check } from 'k6';
import { Client } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-large',
  apiKey: __ENV.LLM_API_KEY, // sent as a bearer token, never logged
  name: 'chat',
  timeouts: { connect: '3s', firstToken: '10s', idle: '30s', total: '2m' },
  slo: { ttft: '2s', tpot: '200ms' },
});

export const options = {
  vus: 4,
  duration: __ENV.DURATION || '10s',
  thresholds: {
    llm_ttft: ['p(95)<3000'],
    llm_tpot: ['p(95)<250'],
    llm_failed: ['rate<0.01'],
    llm_goodput: ['rate>0.9'],
  },
};

export default async function () {
  const r = await client.chat({
    messages: [{ role: 'user', content: 'Explain continuous batching in two sentences.' }],
    max_tokens: 64,
  }, { tags: { category: 'short' } });
  check(r, {
    'answer complete': (x) => x.ok && x.finishReason !== '',
    'tokens counted by the server': (x) => x.tokenSource === 'usage',
  });
}
