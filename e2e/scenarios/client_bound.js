// llm-sim: --model sim=demo --seed 1
// Client-bound (docs/guide.md#client_bound): a per-event callback that takes 30 ms while events
// arrive every ~20 ms. The callback blocks its VU's event loop (k6's sleep, so it
// does not burn the CI machine's CPU the way a heavy JSON.parse would), events
// queue behind it and run later and later after they arrived.
import { sleep } from 'k6';
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });

export const options = { vus: 8, duration: '10s' };

export default async function () {
  await client.chat(
    { messages: [{ role: 'user', content: 'Count to thirty.' }], max_tokens: 32 },
    { onEvent: () => sleep(0.03) },
  );
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
