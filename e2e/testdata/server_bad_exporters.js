// serverMetrics beside llm-sim's engine (ENGINE_URL): exporters that hang
// (HUNG_URL), are down (DOWN_URL) or serve an HTML page (GARBAGE_URL), and
// a model list that is HTML too. Each is one warning; the test goes on and
// its calls are all there.
import { Client, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL,
  model: 'sim-fast',
  serverMetrics: [
    { url: __ENV.ENGINE_URL, source: 'engine', interval: '200ms', models: `${__ENV.GARBAGE_URL}/v1/models` },
    { url: `${__ENV.HUNG_URL}/metrics`, source: 'hung', interval: '200ms', timeout: '1s' },
    { url: `${__ENV.DOWN_URL}/metrics`, source: 'down', interval: '200ms' },
    { url: `${__ENV.GARBAGE_URL}/metrics`, source: 'garbage', interval: '200ms' },
  ],
});

export const options = { vus: 2, duration: '3s' };

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json`, stdout: true });
}
