// llm-sim: --model sim-cap=fast --set max_num_seqs=8 --set decode_base_ms=20 --set decode_per_seq_ms=0 --set prefill_base_ms=0 --set prefill_per_token_ms=0 --set output_dist=exact --seed 1
// Capacity at an SLO in one ordinary k6 run: Capacity.search changes the
// load window by window (×2 while the objectives hold, then bisection
// between the last pass and the first fail) and ends with the highest level
// that met every objective, as the llm_capacity metric a threshold can gate
// on. A window where the queue grows for as long as it lasts is ended early
// as over-saturated. The llm-sim line above serves a model with a known
// capacity: 8 slots, each call 20 tokens of one 20 ms decode step each (the
// prefill is free and rides in a step) = 0.4 s a call: 20 req/s, or 8 calls
// in flight. MODEL=concurrency searches the closed model.
import { Client, Capacity, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-cap',
});

const closed = __ENV.MODEL === 'concurrency';
const range = { min: Number(__ENV.MIN || (closed ? 1 : 4)), max: Number(__ENV.MAX || 64) };

// #region search
const search = Capacity.search({
  // A window passes a p95 from 59 calls all within it, and an error rate under 5 % from 59 without
  // a failure; a p99, or errors under 1 %, would need 299 calls a window (docs/capacity.md).
  slo: { ttft: __ENV.TTFT || 'p95<250ms', errors: '<5%' },
  ...(closed ? { concurrency: range } : { rate: range, arrivals: __ENV.ARRIVALS === 'constant' ? 'constant' : 'poisson', seed: 1 }),
  window: __ENV.WINDOW || '3s',
  // The answer is given only once a window this long at it passed (the default: three windows, at
  // least a minute, long enough for a queue fed by random arrivals to show its steady state).
  ...(__ENV.SUSTAIN ? { sustain: __ENV.SUSTAIN } : {}),
  precision: 0.05,
  share: 0.8,
});

export const options = {
  scenarios: {
    // The pool: at least as many VUs as calls the top of the range keeps in
    // flight (rate × E2E for the open model, max for the closed one). Each VU
    // runs one iteration, a loop of turns: the scenario ends with the search.
    search: { executor: 'per-vu-iterations', vus: 64, iterations: 1, maxDuration: __ENV.DURATION || search.maxDuration() },
  },
  thresholds: {
    // The answer so far, pushed after every window: CI gates on it.
    llm_capacity: [`value>=${__ENV.MIN_CAPACITY || range.min}`],
  },
};

export default async function () {
  // next() waits for a credit (open) or a slot (closed) at the current level,
  // and is null once the answer is known (or the scenario's time is up).
  for (let turn = search.next(); turn !== null; turn = search.next()) {
    await client.chat({ messages: [{ role: 'user', content: 'Count to twenty.' }], max_tokens: 20 });
  }
}
// #endregion

export function handleSummary(data) {
  const r = search.result(); // the run record's capacity section
  console.log(`capacity search: ${r.outcome}, ${r.windows.length} windows`);
  const dir = __ENV.LLM_REPORT_DIR || 'reports';
  return report(data, { html: `${dir}/capacity.html`, json: `${dir}/capacity.json` });
}
