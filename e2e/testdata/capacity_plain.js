// A plain open-model run at RATE req/s for DURATION against the same llm-sim
// as capacity_truth.js, with the same arrivals (ARRIVALS: 'constant',
// 'poisson' or 'bursty' of cv 2): does the TTFT objective hold there in
// steady state? The first WARMUP of calls is left out of the record; TOKENS
// is each answer's length, VUS the pool (120 when not given).
import { Client, Schedule, collect, report } from 'k6/x/llmstream';

collect({ warmup: __ENV.WARMUP || '10s' });

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-q' });
const rate = Number(__ENV.RATE);
const tokens = Number(__ENV.TOKENS || 20);
const duration = __ENV.DURATION || '60s';
const kinds = {
  constant: () => Schedule.constant({ rate, duration }),
  poisson: () => Schedule.poisson({ rate, duration, seed: 2 }),
  bursty: () => Schedule.gamma({ rate, cv: 2, duration, seed: 2 }),
};
const arrivals = kinds[__ENV.ARRIVALS || 'poisson']();

export const options = {
  scenarios: { plain: { executor: 'constant-vus', vus: Number(__ENV.VUS || 120), duration } },
};

export default async function () {
  const credit = arrivals.next();
  if (credit === null) return;
  await client.chat({ messages: [{ role: 'user', content: 'Count to twenty.' }], max_tokens: tokens });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/capacity_plain.json` });
}
