// One test whose call count is fixed by its executors (shared-iterations and
// per-vu-iterations), run whole or on k6 instances with
//   --execution-segment 0:1/2 --execution-segment-sequence 0,1/2,1   (and 1/2:1)
// Each instance writes its run record; `llmstream merge` adds them up.
import { Client, Dataset, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-fast' });
// 60 prompts per class, 120 iterations: every item once, 60 calls per class.
const items = Dataset.synthetic({ seed: 7, variants: 60, mix: { short: 1, medium: 1 } });

export const options = {
  scenarios: {
    items: { executor: 'shared-iterations', vus: 6, iterations: 120, maxDuration: '60s', exec: 'sendItem' },
    pervu: { executor: 'per-vu-iterations', vus: 6, iterations: 5, maxDuration: '60s', exec: 'hello' },
  },
};

export async function sendItem() {
  const item = items.next();
  await client.chat({ messages: item.messages, max_tokens: 8 }, { item });
}

// Each hello also embeds, for the merge of the embed and rerank section.
export async function hello() {
  await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
  await client.embed({ input: ['hi', 'there'], dimensions: 8 });
}

export function handleSummary(data) {
  return report(data, { json: __ENV.LLM_RECORD, stdout: false });
}
