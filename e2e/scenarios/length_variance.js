// llm-sim: --model sim=demo --set output_dist=uniform --set output_min_tokens=4 --set output_mean_tokens=60 --set decode_base_ms=5 --seed 1
// Length variance (docs/guide.md#length_variance): answers end anywhere between 4 and 116 tokens at the
// same per-token speed (each call sends its own seed, from which llm-sim draws the length), so E2E spreads widely for a reason that is not the service.
import exec from 'k6/execution';
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'request' });

export const options = { vus: 4, duration: '12s' };

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'Answer at any length.' }], max_tokens: 200,
    seed: exec.scenario.iterationInTest }); // the simulator draws the length from the prompt and the seed
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json` });
}
