// One test on several load generators, merged into one report afterwards.
// Each k6 instance runs its share of the test (k6's execution segments: the
// share of the iterations, of the dataset's items, of an arrival process) and
// writes its own run record (under reports/, or LLM_REPORT_DIR); `llmstream merge` adds them up:
//
//   ./k6 run --execution-segment 0:1/2 --execution-segment-sequence 0,1/2,1 -e LLM_RECORD=run-1.json examples/distributed.js
//   ./k6 run --execution-segment 1/2:1 --execution-segment-sequence 0,1/2,1 -e LLM_RECORD=run-2.json examples/distributed.js
//   ./llmstream merge -o reports/merged.json --html reports/merged.html --text reports/run-1.json reports/run-2.json
//
// Run alone (no segment), it is the whole test, and its record merges on its own.
import { Client, Dataset, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-fast',
  name: 'chat',
});

// Every instance builds the same seeded dataset; each draws only its share.
const prompts = Dataset.synthetic({ seed: 7, mix: { short: 3, medium: 1 } });

export const options = {
  scenarios: {
    // A fixed number of calls over all instances: shared-iterations splits them.
    prompts: { executor: 'shared-iterations', vus: 8, iterations: 80, maxDuration: '60s' },
  },
  thresholds: { llm_failed: ['rate<0.01'] },
};

export default async function () {
  const item = prompts.next();
  await client.chat({ messages: item.messages, max_tokens: Math.min(item.maxTokens, 32) }, { item });
}

export function handleSummary(data) {
  const dir = __ENV.LLM_REPORT_DIR || 'reports';
  return report(data, { json: `${dir}/${__ENV.LLM_RECORD || 'record.json'}`, meta: { example: 'distributed.js' } });
}
