// llm-sim: --model sim=small --set decode_per_seq_ms=0.5 --seed 1
// A wave: 2 VUs, a burst of 10, back to 2, 10 s each, against four running slots. The
// burst queues requests; once it is over the report must say how long TTFT took to
// come back to its level before the burst.
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });

export const options = {
  scenarios: {
    wave: {
      executor: 'ramping-vus', startVUs: 2, gracefulRampDown: '5s',
      stages: [
        { duration: '10s', target: 2 },
        { duration: '0s', target: 10 }, { duration: '10s', target: 10 },
        { duration: '0s', target: 2 }, { duration: '10s', target: 2 },
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
