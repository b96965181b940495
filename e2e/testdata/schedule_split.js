// One schedule and one dataset split across k6 instances: each instance logs
// the credits it sent (CREDIT seq offset) with the item drawn for the credit
// (drawInTest(seq)), and the items of a shared-iterations scenario keyed on
// k6's iterationInTest (ITER item).
import exec from 'k6/execution';
import { Client, Dataset, Schedule, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-fast' });
const items = Dataset.synthetic({ seed: 7, variants: 40, mix: { short: 1, medium: 1 } });
const sched = Schedule.gamma({ rate: 40, cv: 2, duration: '2s', seed: 5 });

export const options = {
  scenarios: {
    open: { executor: 'constant-vus', vus: 8, duration: '3s', gracefulStop: '0s', exec: 'open' },
    // 60 iterations on 4 VUs: three equal segments get 30/15/15 of them.
    iters: { executor: 'shared-iterations', vus: 4, iterations: 60, maxDuration: '30s', exec: 'iter' },
  },
};

export async function open() {
  const c = sched.next();
  if (c === null) return;
  const item = items.drawInTest(c.seq);
  console.log(`CREDIT ${c.seq} ${c.offset.toFixed(6)} ${item.id}`);
  await client.chat({ messages: item.messages, max_tokens: 2 }, { item });
}

export async function iter() {
  const item = items.drawInTest(exec.scenario.iterationInTest);
  console.log(`ITER ${item.id}`);
  await client.chat({ messages: item.messages, max_tokens: 2 }, { item });
}

export function handleSummary(data) {
  return report(data, { json: __ENV.LLM_RECORD, stdout: false });
}
