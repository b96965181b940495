// The module's side of the per-call benchmark for embeddings (make
// bench-calls): client.embed of one input at batch 1, looped by VUS VUs
// for DURATION; bench/k6-http-embed.js posts the same request with k6/http.
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 bench/k6-embed.js
import { Client } from 'k6/x/llmstream';
import { callsOptions, callsSummary } from './k6-calls-summary.js';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-fast',
});

export const options = callsOptions;

export default async function () {
  await client.embed({ input: 'chunk 0 of the quarterly report on load testing' });
}

export function handleSummary(data) {
  return callsSummary(data, 'module embed');
}
