// llm-sim: --model sim=demo --fault headers_delay=150,ttft=60:1 --seed 1
// Network-heavy TTFT (docs/guide.md#network_heavy): every response's headers come 150 ms after the
// request (a far region or a slow gateway), the first token 60 ms later, so most
// of TTFT passes before the server answers.
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });

export const options = { vus: 4, duration: '10s' };

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'What is a time to first token?' }], max_tokens: 8 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
