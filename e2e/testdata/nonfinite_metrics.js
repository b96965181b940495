// A metrics endpoint whose series turn NaN and +Inf (e2e/hostile_test.go):
// report() writes its record and HTML all the same.
import { Client, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL, model: 'm', name: 'vllm',
  serverMetrics: { url: __ENV.LLM_METRICS_URL, interval: '500ms' },
});

export const options = {
  scenarios: { calls: { executor: 'shared-iterations', vus: 1, iterations: 6, maxDuration: '60s' } },
};

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json`, html: `${__ENV.LLM_REPORT_DIR}/report.html` });
}
