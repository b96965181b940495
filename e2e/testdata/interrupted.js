// A 30 s test that is stopped early, by STOP: 'signal' (the test sends
// SIGINT), 'abort' (VU 1 calls test.abort() on its second iteration) or
// 'threshold' (a TTFT threshold no call meets, with abortOnFail). VU 1
// makes short calls; the others long ones (about 8 s of decode on llm-sim's
// demo profile), which the stop cuts in flight.
import exec from 'k6/execution';
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-large' });
const stop = __ENV.STOP || 'signal';

export const options = {
  scenarios: { load: { executor: 'constant-vus', vus: 4, duration: '30s' } },
  thresholds: stop === 'threshold'
    ? { llm_ttft: [{ threshold: 'p(95)<1', abortOnFail: true }] }
    : {},
};

export default async function () {
  const short = exec.vu.idInTest === 1;
  if (stop === 'abort' && short && exec.vu.iterationInScenario >= 1) {
    exec.test.abort('enough for this test');
  }
  await client.chat({ messages: [{ role: 'user', content: 'Tell a long story.' }], max_tokens: short ? 8 : 400 });
}

export function handleSummary(data) {
  const dir = __ENV.LLM_REPORT_DIR;
  return report(data, { json: `${dir}/report.json`, html: `${dir}/report.html`, stdout: true });
}
