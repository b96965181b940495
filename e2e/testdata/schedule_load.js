// Open-model load two ways, chosen by MODE: the extension's schedule with a
// pool of VUS (constant-vus), or k6's constant-arrival-rate with VUS VUs at
// most. RATE calls/s for DURATION against MODEL; the run record goes to
// LLM_RECORD and each call's due-time figures to the log (CALL lines).
import { Client, Schedule, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: __ENV.MODEL || 'sim-fast' });
const rate = Number(__ENV.RATE || 20);
const vus = Number(__ENV.VUS || 20);
const duration = __ENV.DURATION || '3s';
const sched = Schedule.constant({ rate, duration });

export const options = {
  scenarios: __ENV.MODE === 'car'
    ? { load: { executor: 'constant-arrival-rate', rate, timeUnit: '1s', duration, preAllocatedVUs: vus, maxVUs: vus, gracefulStop: '0s' } }
    : { load: { executor: 'constant-vus', vus, duration, gracefulStop: '0s' } },
};

export default async function () {
  if (__ENV.MODE !== 'car' && sched.next() === null) return;
  const r = await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: Number(__ENV.MAX_TOKENS || 4) });
  console.log(`CALL ${JSON.stringify({ due: r.dueAt, delay: r.dispatchDelay, ttft: r.ttft, ttftFromDue: r.ttftFromDue })}`);
}

export function handleSummary(data) {
  return report(data, { json: __ENV.LLM_RECORD });
}
