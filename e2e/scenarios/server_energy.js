// llm-sim: --model sim=small --set power_idle_w=60 --set power_per_request_w=240 --set gpus=2 --set max_context_tokens=8192 --seed 1
// GPU energy beside the load (docs/guide.md#gpu-energy): serverMetrics reads
// llm-sim's engine and its DCGM-shaped exporter, each on its own interval;
// the run's J per output token must match llm-sim's power model, and the
// engine's section names its model and context length (its /v1/models).
import { Client, report } from 'k6/x/llmstream';

const base = __ENV.LLM_BASE_URL;
const root = base.replace(/\/v1\/?$/, '');
const client = new Client({
  baseURL: base,
  model: 'sim',
  name: 'sim',
  gapSamples: 'off',
  serverMetrics: [
    { url: `${root}/metrics`, source: 'engine', interval: '200ms' },
    { url: `${root}/dcgm/metrics`, source: 'dcgm', interval: '100ms' },
  ],
});

export const options = {
  scenarios: { load: { executor: 'constant-vus', vus: 2, duration: '3s' } },
  thresholds: { llm_server_energy_per_output_token: ['max<1000'] },
};

export default async function () {
  await client.chat({ messages: [{ role: 'user', content: 'Explain continuous batching.' }], max_tokens: 16 });
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/report.json`, stdout: true });
}
