// llm-sim: --model sim-small=small --seed 1
// The server's own view beside the client's: the client reads the server's
// Prometheus /metrics (llm-sim serves vLLM's) while the test runs. The report
// then splits the client's TTFT into what happened outside the server
// (network, HTTP, gateway, client) and the server's queue and prefill, and
// thresholds gate on the server's queue and KV cache (docs/guide.md#the-servers-own-view).
//
//   ./llm-sim --model sim-small=small &
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/server-metrics.js
import { Client, report } from 'k6/x/llmstream';

const baseURL = __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1';
// vLLM, SGLang and llm-sim serve /metrics beside /v1; name another endpoint with LLM_METRICS_URL.
const metricsURL = __ENV.LLM_METRICS_URL || `${baseURL.replace(/\/v1\/?$/, '')}/metrics`;

// #region client
const client = new Client({
  baseURL,
  model: __ENV.LLM_MODEL || 'sim-small',
  name: 'vllm',
  serverMetrics: { url: metricsURL, interval: '1s' },
});
// #endregion

export const options = {
  vus: 3, // under the simulated server's 4 slots: nothing should wait
  duration: __ENV.DURATION || '20s',
  // #region thresholds
  thresholds: {
    llm_server_requests_waiting: ['p(95)<3'], // fewer waiting than the 3 VUs: the server is serving some
    llm_server_kv_cache_usage: ['max<0.95'],
    llm_server_preemptions: ['count==0'],
  },
  // #endregion
};

export default async function () {
  await client.chat({
    messages: [{ role: 'user', content: 'What does a scheduler queue do in an inference server?' }],
    max_tokens: 48,
  });
}

export function handleSummary(data) {
  const dir = __ENV.LLM_REPORT_DIR || '.';
  return report(data, { json: `${dir}/server-metrics.json` });
}
