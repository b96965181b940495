// llm-sim: --model sim=small --set decode_per_seq_ms=0.5 --seed 1
// An open-model step load: the arrival rate steps 3 → 6 → 10 requests/s, 8 s each,
// against four running slots. The VU pool stays the same size, so the stages are the
// rates: the report must find them and name the queue and the knee.
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });

export const options = {
  scenarios: {
    steps: {
      executor: 'ramping-arrival-rate', startRate: 3, timeUnit: '1s', preAllocatedVUs: 40, maxVUs: 80,
      stages: [
        { duration: '8s', target: 3 },
        { duration: '0s', target: 6 }, { duration: '8s', target: 6 },
        { duration: '0s', target: 10 }, { duration: '8s', target: 10 },
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
