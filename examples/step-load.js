// llm-sim: --model sim-small=small --set decode_per_seq_ms=0.5 --seed 1
// A step load against a small simulated batch (4 running slots): the report names
// the knee (where latency starts rising faster than throughput) and the queueing
// behind it (TTFT grows while each request's tokens/s holds): docs/guide.md#knee.
// decode_per_seq_ms=0.5 keeps decode speed nearly flat as the batch fills, so the
// one cause the simulator produces is the queue in front of its 4 slots.
//
//   ./llm-sim --model sim-small=small --set decode_per_seq_ms=0.5 &
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/step-load.js
import { Client, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-small',
  name: 'step',
  gapSamples: 'request',
});

// #region stages
const step = __ENV.STEP || '12s'; // each stage must outlast the report's 10 s minimum
export const options = {
  scenarios: {
    steps: {
      executor: 'ramping-vus',
      startVUs: 1,
      stages: [
        { duration: step, target: 1 },
        { duration: '0s', target: 2 }, { duration: step, target: 2 },
        { duration: '0s', target: 4 }, { duration: step, target: 4 },
        { duration: '0s', target: 8 }, { duration: step, target: 8 },
        { duration: '0s', target: 12 }, { duration: step, target: 12 },
      ],
      gracefulRampDown: '5s',
    },
  },
  thresholds: {
    llm_failed: ['rate<0.01'],
    llm_tokens_per_sec: ['p(50)>5'],
  },
};
// #endregion

export default async function () {
  await client.chat({
    messages: [{ role: 'user', content: 'Summarise the history of continuous batching.' }],
    max_tokens: 48,
  }, { tags: { category: 'short' } });
}

export function handleSummary(data) {
  const dir = __ENV.LLM_REPORT_DIR || 'reports';
  return report(data, { html: `${dir}/step-report.html`, json: `${dir}/step-report.json`, meta: { example: 'step-load.js' } });
}
