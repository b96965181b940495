// llm-sim: --model sim=demo --fault stall=800@4:0.2 --seed 1
// Stalls (docs/guide.md#stalls): one stream in five pauses 800 ms after its fourth token, longer
// than the client's 500 ms stall threshold.
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });

export const options = { vus: 4, duration: '10s' };

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'Describe a stall.' }], max_tokens: 16 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
