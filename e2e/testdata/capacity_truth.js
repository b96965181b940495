// A capacity search against llm-sim set up as c slots of a fixed 200 ms call
// (TestCapacityAgainstQueueingTruth and its make-test variant): ARRIVALS is
// 'constant', 'poisson' or 'bursty' (gamma gaps, cv 2), TTFT the objective,
// MIN and MAX the range, WINDOW, SUSTAIN and MAX_WINDOW the windows (the
// defaults when not given), TOKENS each answer's length, VUS the pool (120
// when not given). The test compares the answer with the boundary of the
// same queue simulated (internal/queuesim).
import { Client, Capacity, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-q' });

const arrivals = __ENV.ARRIVALS || 'poisson';
const tokens = Number(__ENV.TOKENS || 20);
const search = Capacity.search({
  slo: { ttft: __ENV.TTFT || 'p95<600ms' },
  rate: { min: Number(__ENV.MIN || 4), max: Number(__ENV.MAX || 64) },
  arrivals,
  ...(arrivals === 'bursty' ? { cv: 2 } : {}),
  seed: 1,
  precision: Number(__ENV.PRECISION || 0.1),
  maxWindows: 24, // bursty arrivals' passes often carry a lower rate than their level: more windows to converge
  ...(__ENV.WINDOW ? { window: __ENV.WINDOW } : {}),
  ...(__ENV.SUSTAIN ? { sustain: __ENV.SUSTAIN } : {}),
  ...(__ENV.MAX_WINDOW ? { maxWindow: __ENV.MAX_WINDOW } : {}),
});

export const options = {
  scenarios: { search: { executor: 'per-vu-iterations', vus: Number(__ENV.VUS || 120), iterations: 1, maxDuration: search.maxDuration() } },
};

export default async function () {
  for (let turn = search.next(); turn !== null; turn = search.next()) {
    await client.chat({ messages: [{ role: 'user', content: 'Count to twenty.' }], max_tokens: tokens });
  }
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/capacity_truth.json` });
}
