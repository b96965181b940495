// llm-sim: --model sim-cap=fast --set max_num_seqs=8 --set decode_base_ms=20 --set decode_per_seq_ms=0 --set prefill_base_ms=0 --set prefill_per_token_ms=0 --set output_dist=exact --seed 1
// Capacity for your own traffic's shape: Capacity.search replays a trace's
// arrivals (TRACE, by default examples/data/mooncake-sample.jsonl) with its
// time scaled so its mean rate is the level. The answer is "this traffic at
// N req/s", and the trace's speed-up that is (the record's trace.scale).
// Each turn carries the row's request: its prompt length, the prefix blocks
// it shares with other rows, and its output length.
import { Client, Capacity, Schedule, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-cap',
});

// #region search
const search = Capacity.search({
  slo: { ttft: 'p95<250ms', errors: '<5%' },
  rate: { min: Number(__ENV.MIN || 4), max: Number(__ENV.MAX || 64) }, // req/s: the trace's mean rate
  trace: Schedule.trace(__ENV.TRACE || 'data/mooncake-sample.jsonl', { exactOutput: true }),
  window: __ENV.WINDOW || '3s',
  ...(__ENV.SUSTAIN ? { sustain: __ENV.SUSTAIN } : {}), // default: three windows, at least a minute
});

export const options = {
  scenarios: {
    search: { executor: 'per-vu-iterations', vus: 64, iterations: 1, maxDuration: __ENV.DURATION || search.maxDuration() },
  },
  thresholds: { llm_capacity: [`value>=${__ENV.MIN_CAPACITY || 0}`] },
};

export default async function () {
  for (let turn = search.next(); turn !== null; turn = search.next()) {
    await client.chat(turn.body); // the trace row's request
  }
}
// #endregion

export function handleSummary(data) {
  const dir = __ENV.LLM_REPORT_DIR || 'reports';
  return report(data, { json: `${dir}/capacity-trace.json` });
}
