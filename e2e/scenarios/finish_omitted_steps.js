// llm-sim: --model sim=small --set decode_per_seq_ms=0.5 --set omit_finish_reason=true --seed 1
// A step load against a server that names no finish reason, as llm-d's inference simulator
// streams (the tokens, the usage chunk, [DONE]): 1 → 4 → 8 → 16 VUs against four running
// slots, answer lengths fixed with ignore_eos. The answers are complete, so no call fails and
// the report names the queue and the knee as it does for a server that names its finish;
// with STRICT=1 (requireFinishReason) every call fails, as the strict rule wants.
import { Client, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL,
  model: 'sim',
  gapSamples: 'request',
  requireFinishReason: __ENV.STRICT === '1',
});

const step = __ENV.STEP || '6s';
export const options = {
  scenarios: {
    steps: {
      executor: 'ramping-vus', startVUs: 1, gracefulRampDown: '3s',
      stages: [
        { duration: step, target: 1 },
        { duration: '0s', target: 4 }, { duration: step, target: 4 },
        { duration: '0s', target: 8 }, { duration: step, target: 8 },
        { duration: '0s', target: 16 }, { duration: step, target: 16 },
      ],
    },
  },
  thresholds: { llm_failed: ['rate<0.01'] },
};

export default async function () {
  await client.chat({
    messages: [{ role: 'user', content: 'Explain continuous batching.' }],
    max_tokens: 32,
    ignore_eos: true,
  });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
