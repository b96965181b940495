// next() across k6 instances in the shape users write: one draw per
// iteration, 60 shared iterations on 4 VUs. Run on three instances with
//   --execution-segment 0:1/3 --execution-segment-sequence 0,1/3,2/3,1   (and 1/3:2/3, 2/3:1)
// k6 splits the iterations 30/15/15 (they follow the VUs); every instance
// logs the items it sent (ITEM id).
import { Client, Dataset, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-fast' });
// 30 prompts per class, 60 iterations: one pass, every item once.
const items = Dataset.synthetic({ seed: 7, variants: 30, mix: { short: 1, medium: 1 } });

export const options = {
  scenarios: {
    items: { executor: 'shared-iterations', vus: 4, iterations: 60, maxDuration: '30s' },
  },
};

export default async function () {
  const item = items.next();
  await client.chat({ messages: item.messages, max_tokens: 2 }, { item });
  console.log(`ITEM ${item.id}`);
}

export function handleSummary(data) {
  return report(data, { json: __ENV.LLM_RECORD, stdout: false });
}
