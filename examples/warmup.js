// llm-sim: --model sim-large=demo --seed 1
// Warm-up, then measure: the first calls of a test meet cold caches, connections being
// opened and autoscalers still deciding, so they describe start-up, not the service.
// collect() — called once, at the top level, before any call — tells the report what
// to leave out: a warm-up window counted from the test start, whole scenarios, calls
// carrying a tag. Calls made in setup() and teardown() are left out by default. The
// calls still count in k6's own metrics; the report says how many it left out and why.
//
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/warmup.js
import { Client, collect, report } from 'k6/x/llmstream';

// #region collect
const warmup = __ENV.WARMUP || '10s';
collect({ warmup, excludeScenarios: ['warmup'], excludeTags: { phase: 'probe' } });
// #endregion

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-large',
  name: 'chat',
});

const ask = (tags) => client.chat(
  { messages: [{ role: 'user', content: 'Explain continuous batching in two sentences.' }], max_tokens: 32 },
  { tags });

export const options = {
  scenarios: {
    // A few calls to wake the service up; left out by name.
    warmup: { executor: 'constant-vus', vus: 2, duration: warmup, exec: 'warm' },
    // The measured load starts with the warm-up scenario; its own first `warmup` is left
    // out too, by time.
    main: { executor: 'constant-vus', vus: 4, duration: __ENV.DURATION || '40s' },
  },
  thresholds: { llm_failed: ['rate<0.01'] },
};

// One call to check the endpoint answers before the load starts: left out by default.
export async function setup() {
  const r = await ask({});
  if (!r.ok) throw new Error(`the endpoint does not answer: ${r.error.message}`);
}

export async function warm() { await ask({}); }

export default async function () {
  // A health probe now and then, tagged so the report leaves it out.
  await ask(__ITER % 10 === 0 ? { phase: 'probe' } : {});
}

export function handleSummary(data) {
  const dir = __ENV.LLM_REPORT_DIR || 'reports';
  return report(data, {
    json: `${dir}/warmup-report.json`,
    meta: { example: 'warmup.js', llmRequests: data.metrics.llm_requests.values.count },
  });
}
