// A hostile server (e2e/hostile_test.go): every other embeddings answer is
// millions of '[' as application/json, every other stream one event of
// millions of '['. Each such call must fail as decode, and the test go on.
import { Client, report } from 'k6/x/llmstream';

// maxEventSize above the hostile event: nesting, not size, must refuse it.
const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'm', maxEventSize: 16 << 20, maxBodySize: 256 << 20 });

export const options = {
  scenarios: { calls: { executor: 'shared-iterations', vus: 1, iterations: 6, maxDuration: '60s' } },
};

export default async function () {
  const e = await client.embed({ input: ['hi'] });
  console.log(`EMBED ${e.ok ? 'ok' : `${e.error.type}: ${e.error.message.slice(0, 100)}`}`);
  const c = await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 });
  console.log(`CHAT ${c.ok ? 'ok' : `${c.error.type}: ${c.error.message.slice(0, 100)}`}`);
}

export function handleSummary(data) {
  return report(data, { json: __ENV.LLM_RECORD, stdout: false });
}
