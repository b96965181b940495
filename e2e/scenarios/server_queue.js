// llm-sim: --model sim=small --set max_num_seqs=2 --set decode_per_seq_ms=0.5 --seed 1
// The queue_bound scenario with the server's own /metrics read beside it
// (docs/guide.md#the-servers-own-view): two running slots, then 8 VUs, so six
// requests wait in the server's queue. The threshold on the server's queue
// must fail the run; the report must cite the server's queue.
import { Client, report } from 'k6/x/llmstream';

const base = __ENV.LLM_BASE_URL;
const client = new Client({
  baseURL: base,
  model: 'sim',
  name: 'sim',
  gapSamples: 'request',
  serverMetrics: { url: `${base.replace(/\/v1\/?$/, '')}/metrics`, interval: '500ms', headers: { Authorization: 'Bearer metrics-secret-e2e' } },
});

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
  thresholds: {
    llm_server_requests_waiting: ['p(95)<1'],
    llm_server_preemptions: ['count==0'],
  },
};

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'Explain continuous batching.' }], max_tokens: 24 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json`, stdout: true });
}
