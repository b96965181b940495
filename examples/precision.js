// A run that stops when it knows enough: instead of guessing a duration, the
// gate keeps a pool of VUs calling until the TTFT p95 and the E2E p95 are each
// known to ±10 % (their distribution-free 95 % intervals lie within 10 % of
// the estimate), or until the cap. The run record's precision section says
// which came first, and when.
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/precision.js
import { Client, Precision, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-small',
});

// #region gate
const enough = Precision.until({ ttft: 'p95±10%', e2e: 'p95±10%' }, { cap: __ENV.CAP || '2m' });

export const options = {
  scenarios: {
    // Each VU runs one iteration, a loop of calls: the scenario ends with the gate.
    sure: { executor: 'per-vu-iterations', vus: 8, iterations: 1, maxDuration: '3m' },
  },
};

export default async function () {
  while (enough.next() !== null) {
    await client.chat({ messages: [{ role: 'user', content: 'Name three rivers.' }], max_tokens: 16 });
  }
}
// #endregion

export function handleSummary(data) {
  const r = enough.result();
  console.log(`precision gate: ${r.outcome} after ${r.ended_s === null ? '?' : r.ended_s.toFixed(1)} s`);
  const dir = __ENV.LLM_REPORT_DIR || 'reports';
  return report(data, { html: `${dir}/precision.html`, json: `${dir}/precision.json` });
}
