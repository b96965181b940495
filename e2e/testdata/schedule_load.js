// Open-model load two ways, chosen by MODE: the extension's schedule with a
// pool of VUS (constant-vus), or k6's constant-arrival-rate with VUS VUs at
// most. RATE calls/s for DURATION against MODEL; the run record goes to
// LLM_RECORD, each call's due-time figures to the log (CALL lines) and k6's
// own count of failed calls, dropped credits among them, to a K6 line.
// GRACEFUL is the scenario's gracefulStop (0s: the stop cuts calls short).
import { Client, Schedule, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: __ENV.MODEL || 'sim-fast' });
const rate = Number(__ENV.RATE || 20);
const vus = Number(__ENV.VUS || 20);
const duration = __ENV.DURATION || '3s';
const gracefulStop = __ENV.GRACEFUL || '0s';
const sched = Schedule.constant({ rate, duration });

export const options = {
  scenarios: __ENV.MODE === 'car'
    ? { load: { executor: 'constant-arrival-rate', rate, timeUnit: '1s', duration, preAllocatedVUs: vus, maxVUs: vus, gracefulStop } }
    : { load: { executor: 'constant-vus', vus, duration, gracefulStop } },
  // Always met: they make k6 keep the dropped credits' submetrics for the summary.
  thresholds: { 'llm_failed{error_type:dropped}': ['rate>=0'], 'llm_requests{error_type:dropped}': ['count>=0'] },
};

export default async function () {
  if (__ENV.MODE !== 'car' && sched.next() === null) return;
  const r = await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: Number(__ENV.MAX_TOKENS || 4) });
  console.log(`CALL ${JSON.stringify({ due: r.dueAt, delay: r.dispatchDelay, ttft: r.ttft, ttftFromDue: r.ttftFromDue })}`);
}

export function handleSummary(data) {
  const value = (metric, stat) => (data.metrics[metric] ? data.metrics[metric].values[stat] : 0);
  console.log(`K6 ${JSON.stringify({
    requests: value('llm_requests', 'count'), failed: value('llm_failed', 'passes'),
    droppedRequests: value('llm_requests{error_type:dropped}', 'count'),
    droppedFailed: value('llm_failed{error_type:dropped}', 'passes'),
  })}`);
  return report(data, { json: __ENV.LLM_RECORD });
}
