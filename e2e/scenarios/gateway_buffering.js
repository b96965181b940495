// llm-sim: --model sim=demo --set gateway_flush_ms=250 --seed 1
// Gateway buffering (docs/guide.md#gateway_buffering): the server makes a token every ~20 ms but a buffering
// hop flushes the stream every 250 ms, so about twelve events arrive together,
// then nothing for a quarter of a second. Every gap is kept (gapSamples 'event').
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim' });

export const options = { vus: 4, duration: '10s' };

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'Write a short story.' }], max_tokens: 64 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
