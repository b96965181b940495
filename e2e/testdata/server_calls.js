// Short calls for DURATION (8 s) with serverMetrics on llm-sim's /metrics,
// read every 500 ms: the test may stop llm-sim and start it again meanwhile.
import { Client, report } from 'k6/x/llmstream';

const base = __ENV.LLM_BASE_URL;
const client = new Client({
  baseURL: base,
  model: 'sim-large',
  timeouts: { connect: '1s' },
  serverMetrics: { url: `${base.replace(/\/v1\/?$/, '')}/metrics`, interval: '500ms', timeout: '2s' },
});

export const options = { vus: 4, duration: __ENV.DURATION || '8s' };

export default async function () {
  const r = await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 });
  if (!r.ok) {
    await new Promise((resolve) => setTimeout(resolve, 50)); // a server that is down is not hammered
  }
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json`, stdout: true });
}
