// llm-sim: --model sim=small --set spec_decode_acceptance=[0.8,0.6,0.4] --seed 1
// Speculative decoding's acceptance (docs/guide.md#speculative-decoding):
// llm-sim drafts 3 tokens a step and accepts each position at the shares
// configured; serverMetrics reads its vLLM counters, and the run's
// acceptance rate, mean acceptance length and acceptance by position must
// be those shares. A threshold gates on the acceptance rate.
import { Client, report } from 'k6/x/llmstream';

const base = __ENV.LLM_BASE_URL;
const client = new Client({
  baseURL: base,
  model: 'sim',
  gapSamples: 'off',
  serverMetrics: { url: `${base.replace(/\/v1\/?$/, '')}/metrics`, source: 'engine', interval: '200ms' },
});

export const options = {
  scenarios: { load: { executor: 'constant-vus', vus: 4, duration: '3s' } },
  thresholds: { llm_server_spec_acceptance: ['avg>0.5', 'avg<0.7'] },
};

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'Explain speculative decoding.' }], max_tokens: 48 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json`, stdout: true });
}
