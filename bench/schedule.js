// The k6 side of the schedule benchmark (scripts/schedule-bench.sh, make
// bench-schedule): one open-model run at RATE req/s for DURATION against
// llm-sim's zero-delay model, with MODE choosing who dispatches:
//   schedule  the extension's Schedule.constant, claimed by a pool of VUS
//             constant-vus: llm_dispatch_delay is send − due, in Go;
//   k6        k6's constant-arrival-rate with VUS pre-allocated (and max) VUs:
//             k6 has no figure for how late an iteration started, so the
//             script computes it, start − (scenario start + n / rate), n the
//             iteration's index in the test. It holds only while nothing was
//             dropped (a dropped tick takes no index, so later iterations
//             would be compared with earlier ticks): the table says so.
//   trace     Schedule.trace(TRACE) replayed by VUS VUs, for k6's memory with
//             the trace loaded (scripts/schedule-bench.sh reads the heap);
//             FROM_DISK=1 reads it with fromDisk (no copy of the text in k6).
// Both dispatch modes also keep start_delay_js, the same start − due figure
// from Date.now() (millisecond clock) in both, so the two stand on one ruler.
// handleSummary writes the figures the table needs as JSON to SUMMARY_JSON.
import exec from 'k6/execution';
import { Trend } from 'k6/metrics';
import { Client, Schedule } from 'k6/x/llmstream';

const mode = __ENV.MODE || 'schedule';
const rate = Number(__ENV.RATE || 100);
const duration = __ENV.DURATION || '15s';
const vus = parseInt(__ENV.VUS || '100', 10);
const maxTokens = parseInt(__ENV.MAX_TOKENS || '4', 10);

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-fast',
});
const startDelay = new Trend('start_delay_js', true);
const messages = [{ role: 'user', content: 'Hello' }];

let schedule = null;
if (mode === 'schedule') schedule = Schedule.constant({ rate, duration });
if (mode === 'trace') schedule = Schedule.trace(__ENV.TRACE, { fromDisk: __ENV.FROM_DISK === '1' });

const scenario =
  mode === 'k6'
    ? { executor: 'constant-arrival-rate', rate, timeUnit: '1s', duration, preAllocatedVUs: vus, maxVUs: vus }
    : { executor: 'constant-vus', vus, duration };

export const options = {
  scenarios: { bench: scenario },
  summaryTrendStats: ['p(50)', 'p(99)', 'max', 'count'],
};

export default async function () {
  if (mode === 'k6') {
    const n = exec.scenario.iterationInTest;
    startDelay.add(Date.now() - (exec.scenario.startTime + (n * 1000) / rate));
    await client.chat({ messages, max_tokens: maxTokens });
    return;
  }
  const credit = schedule.next();
  if (credit === null) return;
  if (mode === 'schedule') startDelay.add(Date.now() - credit.dueAt);
  await client.chat(mode === 'trace' ? { ...credit.body, max_tokens: maxTokens } : { messages, max_tokens: maxTokens });
}

function values(data, name) {
  const m = data.metrics[name];
  return m ? m.values : null;
}

export function handleSummary(data) {
  const out = {
    mode,
    rate,
    vus,
    runMs: data.state.testRunDurationMs,
    calls: (values(data, 'llm_requests') || {}).count ?? null,
    dispatch: values(data, 'llm_dispatch_delay'),
    startJs: values(data, 'start_delay_js'),
    iteration: values(data, 'iteration_duration'),
    e2e: values(data, 'llm_e2e'),
    failed: (values(data, 'llm_failed') || {}).rate ?? null,
    k6Dropped: (values(data, 'dropped_iterations') || { count: 0 }).count,
    schedule: schedule ? schedule.stats() : null,
  };
  return { [__ENV.SUMMARY_JSON || 'schedule-summary.json']: JSON.stringify(out) };
}
