// One test on several load generators: run it whole, or on k6 instances with
//   --execution-segment 0:1/3 --execution-segment-sequence 0,1/3,2/3,1   (and 1/3:2/3, 2/3:1)
// Every instance logs the dataset items it sent (ITEM id) and the arrivals it
// ran (ARRIVAL), and writes a run record that says which segment it covered.
import { Arrivals, Client, Dataset, report } from 'k6/x/llmstream';
import { sleep } from 'k6';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-fast' });
// 60 prompts per class, 120 iterations: one pass, every item once.
const items = Dataset.synthetic({ seed: 7, variants: 60, mix: { short: 1, medium: 1 } });
const arrivals = Arrivals.poisson({ rate: 40, seed: 3 });

export const options = {
  scenarios: {
    items: { executor: 'shared-iterations', vus: 12, iterations: 120, maxDuration: '60s', exec: 'sendItem' },
    open: { executor: 'constant-vus', vus: 12, duration: '3s', gracefulStop: '0s', exec: 'arrive' },
  },
};

export async function sendItem() {
  const item = items.next();
  await client.chat({ messages: item.messages, max_tokens: 4 }, { item });
  console.log(`ITEM ${item.id}`);
}

export async function arrive() {
  sleep(arrivals.next());
  console.log('ARRIVAL');
  await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
}

export function handleSummary(data) {
  return report(data, { json: __ENV.LLM_RECORD, stdout: false });
}
