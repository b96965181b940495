// llm-sim: --model sim=small --set max_num_seqs=2 --trace-bodies --seed 1
// Trace context into the server (docs/report.md#slowest-calls-and-their-trace-ids): every call
// sends a fresh W3C traceparent, its trace id is in the result, and the
// report names each category's slowest calls by it; a call that sets its own
// traceparent keeps it. llm-sim records the headers it got (--trace-bodies).
import { check } from 'k6';
import exec from 'k6/execution';
import { Client, report } from 'k6/x/llmstream';

// own is the script's own trace context, which the call must send as it is.
const own = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL,
  model: 'sim',
  gapSamples: 'off',
  tracing: { propagator: 'w3c', sampling: 1 },
});

export const options = {
  scenarios: { load: { executor: 'shared-iterations', vus: 4, iterations: 40, maxDuration: '60s' } },
  thresholds: { checks: ['rate==1'] },
};

export default async function () {
  const n = exec.scenario.iterationInTest;
  const long = n % 2 === 1;
  const res = await client.chat(
    { messages: [{ role: 'user', content: 'Explain continuous batching.' }], max_tokens: long ? 24 + (n % 7) * 4 : 4 },
    { tags: { category: long ? 'long' : 'short' } },
  );
  check(res, { 'a trace id per call': (r) => r.traceId !== null && /^[0-9a-f]{32}$/.test(r.traceId) });
  if (n === 0) {
    const mine = await client.chat(
      { messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 },
      { headers: { traceparent: own }, tags: { category: 'own' } },
    );
    check(mine, { "the script's own trace id": (r) => r.traceId === own.split('-')[1] });
  }
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json`, stdout: true });
}
