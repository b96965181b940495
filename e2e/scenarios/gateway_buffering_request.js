// llm-sim: --model sim=demo --set gateway_flush_ms=250 --seed 1
// Gateway buffering with gapSamples: 'request', the setting recommended for long runs:
// k6 gets one gap sample per call, but the report still reads every gap of every call,
// so the bursts of events every 250 ms must be found exactly as with every gap kept
// (docs/guide.md#gateway_buffering).
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });

export const options = { vus: 4, duration: '10s' };

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'Write a short story.' }], max_tokens: 64 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
