// A test of DURATION (5 s) whose serverMetrics endpoint never answers
// (METRICS_URL): neither the start nor the end of the test may wait the
// scrape's timeout (10 s by default) for it.
import { Client, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL,
  model: 'sim-fast',
  serverMetrics: { url: __ENV.METRICS_URL },
});

export const options = { vus: 1, duration: __ENV.DURATION || '5s' };

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json`, stdout: true });
}
