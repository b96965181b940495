// llm-sim: --model sim=demo --set decode_base_ms=10 --set decode_per_seq_ms=8 --seed 1
// Decode saturation (docs/guide.md#decode_saturated): 16 slots, so nothing waits, but every decoding
// sequence adds 8 ms to each step: at 8 VUs each stream gets about a quarter of
// the tokens/s it gets alone.
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });

export const options = {
  scenarios: {
    steps: {
      executor: 'ramping-vus', startVUs: 1, gracefulRampDown: '3s',
      stages: [
        { duration: '12s', target: 1 },
        { duration: '0s', target: 8 }, { duration: '12s', target: 8 },
      ],
    },
  },
};

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'Explain continuous batching.' }], max_tokens: 16 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
