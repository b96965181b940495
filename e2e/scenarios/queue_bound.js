// llm-sim: --model sim=small --set max_num_seqs=2 --set decode_per_seq_ms=0.5 --seed 1
// Queueing (docs/guide.md#queue_bound): two running slots, decode barely slower with both busy. At 8
// VUs six requests wait for a slot, so TTFT grows while each stream's tokens/s holds.
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
  await client.chat({ messages: [{ role: 'user', content: 'Explain continuous batching.' }], max_tokens: 24 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
