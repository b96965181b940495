// The k6/http side of the per-call benchmark for embeddings (make
// bench-calls): the request bench/k6-embed.js makes through the module (one
// input), posted with k6's own http.post and its answer read whole.
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 bench/k6-http-embed.js
import http from 'k6/http';
import { callsOptions, callsSummary } from './k6-calls-summary.js';

const url = `${__ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1'}/embeddings`;
const body = JSON.stringify({
  model: __ENV.LLM_MODEL || 'sim-fast',
  input: 'chunk 0 of the quarterly report on load testing',
});
const params = { headers: { 'Content-Type': 'application/json' } };

export const options = callsOptions;

export default function () {
  http.post(url, body, params);
}

export function handleSummary(data) {
  return callsSummary(data, 'k6/http embed');
}
