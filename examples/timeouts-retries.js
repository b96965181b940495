// llm-sim: --model sim-large=demo --model sim-small=fast --fault status=503:0.15 --fault stall=1500@5:0.05 --seed 7
//
// Split timeouts, safe retries and a fallback against a flaky server (docs/client.md):
// 15% of requests get a 503 before streaming (retried with backoff, same
// Idempotency-Key), 5% stall for 1.5 s after 5 tokens (the 1 s idle timeout ends
// them; they are not retried because output was already received). The first line
// tells `make test` how to start llm-sim for this script.
import { check } from 'k6';
import { Client } from 'k6/x/llmstream';

const base = __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1';

const small = new Client({ baseURL: base, model: 'sim-small', name: 'fallback' });

const client = new Client({
  baseURL: base,
  model: 'sim-large',
  name: 'primary',
  timeouts: { connect: '3s', firstToken: '10s', idle: '1s', total: '1m' },
  retry: { attempts: 3, on: ['http_5xx', 'http_429', 'network'], backoff: { base: '50ms', max: '500ms' }, idempotencyKey: true },
  fallback: small,
  fallbackOn: ['http_5xx'],
});

export const options = {
  vus: 8,
  duration: __ENV.DURATION || '15s',
  thresholds: {
    'llm_failed{route:primary}': ['rate<0.2'], // stalls past the idle timeout (not routed to the fallback)
    'llm_failed{route:fallback}': ['rate<0.01'],
    llm_retries: ['count>0'], // the 503s were retried
    'llm_errors{error_type:timeout_idle}': ['count>=0'],
  },
};

export default async function () {
  const r = await client.chat({
    messages: [{ role: 'user', content: 'Give me three facts about queues.' }],
    max_tokens: 32,
  }, { tags: { category: 'short' } });
  check(r, {
    'answered or classified': (x) => x.ok || ['timeout_idle', 'http_5xx'].includes(x.error.type),
    // A stall after output is not retried: the partial answer is kept, never asked for twice.
    'idle timeouts keep their partial answer': (x) => x.ok || x.error.type !== 'timeout_idle' || x.chunks > 0,
  });
}
