// llm-sim: --model sim-large=demo --seed 1
// Prompts from a file: Dataset.load reads examples/data/prompts.jsonl (JSON lines, each
// with its own category) through k6's file system, so `k6 archive` carries the file and
// the archive runs anywhere — on another machine, in k6-operator, in `k6 cloud run
// --local-execution` (docs/distributed.md). Thresholds per category from the file.
//
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/prompts-file.js
//   ./k6 archive examples/prompts-file.js -O llm-test.tar && ./k6 run -e LLM_BASE_URL=... llm-test.tar
import { check } from 'k6';
import { Client, Dataset } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-large',
  apiKey: __ENV.LLM_API_KEY,
  name: 'support-bot',
});

// Relative to this script; built once per k6 process and shared by its VUs.
const prompts = Dataset.load('./data/prompts.jsonl');

export const options = {
  vus: 4,
  duration: __ENV.DURATION || '15s',
  thresholds: {
    'llm_ttft{category:support}': ['p(95)<3000'],
    'llm_requests{category:summarise}': ['count>0'], // every category of the file was drawn
    'llm_requests{category:write}': ['count>0'],
    llm_failed: ['rate<0.01'],
  },
};

export default async function () {
  const p = prompts.next();
  const r = await client.chat({ messages: p.messages, max_tokens: p.maxTokens }, { item: p });
  check(r, { 'answered': (x) => x.ok && x.text.length > 0 });
}
