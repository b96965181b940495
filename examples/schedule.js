// An open-model test on the extension's own schedule: requests arrive at a
// Poisson rate whether or not earlier ones finished, and every call knows the
// time it was due. A pool of VUs (constant-vus) takes credits in turn: when
// all are busy, the next credit waits for the first free one and goes out
// late, and that lateness is measured (llm_dispatch_delay), while
// llm_ttft_from_due and llm_e2e_from_due count from the due time — what a
// user arriving on schedule waited. Credits nobody sent are counted as
// dropped in the report, never lost.
import { Client, Schedule, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-fast',
});

const duration = __ENV.DURATION || '30s';

// One schedule for the whole test (and, on execution segments, for all
// instances together: each runs its share).
const arrivals = Schedule.poisson({ rate: Number(__ENV.RATE || 20), duration, seed: 1 });

export const options = {
  scenarios: {
    // The pool: as many VUs as calls may be in flight at once.
    open: { executor: 'constant-vus', vus: 20, duration },
  },
  thresholds: {
    llm_failed: ['rate<0.01'],
    // The load generator kept up: credits went out within 50 ms of their time.
    llm_dispatch_delay: ['p(99)<50'],
  },
};

export default async function () {
  const credit = arrivals.next(); // sleeps until the credit is due
  if (credit === null) return; // the schedule is over (or the test is stopping)
  await client.chat({ messages: [{ role: 'user', content: 'Summarize the quarterly report.' }], max_tokens: 32 });
}

export function handleSummary(data) {
  const s = arrivals.stats();
  console.log(`schedule: ${s.claimed} credits sent, ${s.late} late (max ${s.maxLagMs.toFixed(1)} ms), ${s.dropped} dropped`);
  return report(data);
}
