// llm-sim: --model sim=demo --seed 1
// Cache busted (docs/guide.md#cache_busted): every prompt starts with one of two 1000-token system
// prompts, which the prefix cache would serve, but cacheBust puts a unique nonce
// in front of each, as a timestamp or request id early in a real prompt does.
import { Client, Dataset, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });
const prompts = Dataset.synthetic({
  seed: 1, mix: { medium: 1 },
  sharedPrefix: { count: 2, tokens: 1000, fraction: 1 }, cacheBust: true,
});

export const options = { vus: 4, duration: '10s' };

export default async function () {
  const p = prompts.next();
  await client.chat({ messages: p.messages, max_tokens: 8 }, { item: p });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
