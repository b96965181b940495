// A capacity search whose client reads llm-sim's /metrics (serverMetrics,
// every 100 ms), at a first level past the capacity: the server's waiting
// count feeds the search's over-saturation test (TestCapacitySearch/waiting),
// and its DCGM-shaped exporter gives each capacity window its GPU energy.
import { Client, Capacity, report } from 'k6/x/llmstream';

const root = __ENV.LLM_BASE_URL.replace(/\/v1$/, '');
const client = new Client({
  baseURL: __ENV.LLM_BASE_URL,
  model: 'sim-long',
  serverMetrics: [
    { url: `${root}/metrics`, source: 'engine', interval: '100ms' },
    { url: `${root}/dcgm/metrics`, source: 'dcgm', interval: '100ms' },
  ],
});

const search = Capacity.search({
  slo: { ttft: 'p95<250ms', errors: '<5%' },
  rate: { min: Number(__ENV.MIN), max: 100 },
  arrivals: 'constant',
  window: '10s',
});

export const options = {
  scenarios: { search: { executor: 'per-vu-iterations', vus: 80, iterations: 1, maxDuration: search.maxDuration() } },
};

export default async function () {
  for (let turn = search.next(); turn !== null; turn = search.next()) {
    await client.chat({ messages: [{ role: 'user', content: 'Count to ten.' }], max_tokens: 10 });
  }
}

export function handleSummary(data) {
  return report(data, { json: `${__ENV.LLM_REPORT_DIR}/capacity_waiting.json` });
}
