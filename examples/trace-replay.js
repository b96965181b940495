// Replaying production traffic: a trace in Mooncake's format (examples/data/
// mooncake-sample.jsonl; Bailian, BurstGPT and Azure traces read alike) sent
// on its own timestamps. Each credit carries a request built to its row:
// the prompt exactly input_length tokens long, rows that share hash_ids
// sharing that text block for block (so a prefix cache sees what production
// saw), and max_tokens from output_length.
import { Client, Schedule, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-fast',
});

// rateScale is the one time knob: 2 replays twice as fast as recorded. A
// trace of millions of rows reads best with fromDisk: true: streamed from the
// disk, without k6's in-memory copy of its text, but then `k6 archive` does not
// carry the file (docs/schedule.md, "Large traces").
const trace = Schedule.trace('data/mooncake-sample.jsonl', { rateScale: Number(__ENV.RATE_SCALE || 1), exactOutput: true });

export const options = {
  scenarios: {
    // The pool: enough VUs for every call in flight at once.
    replay: { executor: 'constant-vus', vus: 16, duration: __ENV.DURATION || '10s' },
  },
  thresholds: {
    llm_failed: ['rate<0.01'],
    llm_dispatch_delay: ['p(99)<100'],
  },
};

export default async function () {
  const credit = trace.next();
  if (credit === null || !credit.body) return; // the trace is over
  await client.chat(credit.body);
}

export function handleSummary(data) {
  const s = trace.stats();
  const info = trace.info();
  console.log(`${info ? info.summary : 'trace'}; sent ${s.claimed}, ${s.dropped} dropped`);
  return report(data);
}
