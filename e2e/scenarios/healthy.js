// llm-sim: --model sim=demo --seed 1
// A healthy service under a step load it absorbs (16 slots, 1 → 3 → 8 VUs), with
// shared-prefix prompts that hit the prefix cache and every gap kept: each rule
// has enough data to speak, and none may.
import { Client, Dataset, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim' });
const prompts = Dataset.synthetic({
  seed: 3, mix: { short: 1, medium: 1 },
  sharedPrefix: { count: 2, tokens: 400, fraction: 1 },
});

const step = '12s'; // a stage needs calls starting in it for 10 s
export const options = {
  scenarios: {
    steps: {
      executor: 'ramping-vus', startVUs: 1, gracefulRampDown: '3s',
      stages: [
        { duration: step, target: 1 },
        { duration: '0s', target: 3 }, { duration: step, target: 3 },
        { duration: '0s', target: 8 }, { duration: step, target: 8 },
      ],
    },
  },
};

export default async function () {
  const p = prompts.next();
  await client.chat({ messages: p.messages, max_tokens: 24 }, { item: p });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
