// llm-sim: --model sim=small --set decode_per_seq_ms=0.5 --seed 1
// The step load users write: 1 → 4 → 8 → 16 VUs, 8 s per step, against a server with
// four running slots. Calls take under a second when a slot is free, so 8 s plateaus
// are stages; the queue in front of the slots must be named, and the knee.
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });

export const options = {
  scenarios: {
    steps: {
      executor: 'ramping-vus', startVUs: 1, gracefulRampDown: '3s',
      stages: [
        { duration: '8s', target: 1 },
        { duration: '0s', target: 4 }, { duration: '8s', target: 4 },
        { duration: '0s', target: 8 }, { duration: '8s', target: 8 },
        { duration: '0s', target: 16 }, { duration: '8s', target: 16 },
      ],
    },
  },
};

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'Explain continuous batching.' }], max_tokens: 48 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
