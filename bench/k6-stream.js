// The k6 side of the loopback benchmark (scripts/bench.sh): VUS VUs, one stream
// each, looping 1000-token answers from llm-sim's zero-delay model for DURATION.
// Answers still open when the run ends are cancelled and not counted
// (gracefulStop 0s), exactly as bench/bareclient does.
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 -e GAP_SAMPLES=request bench/k6-stream.js
import { Client } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-fast',
  // 'event' pushes one llm_inter_token_gap sample per token; 'sampled' (the
  // module's default) at most gapSampleRate a second for the process;
  // 'request' pushes the request's mean gap.
  gapSamples: __ENV.GAP_SAMPLES || 'event',
  // SERVER_METRICS=URL scrapes the server's /metrics beside the load, to show
  // that reading it costs the load nothing measurable.
  ...(__ENV.SERVER_METRICS ? { serverMetrics: { url: __ENV.SERVER_METRICS, interval: __ENV.SERVER_METRICS_INTERVAL || '1s' } } : {}),
});

const maxTokens = parseInt(__ENV.MAX_TOKENS || '1000', 10);
const messages = [{ role: 'user', content: 'Write a long story.' }];

export const options = {
  scenarios: {
    stream: {
      executor: 'constant-vus',
      vus: parseInt(__ENV.VUS || '50', 10),
      duration: __ENV.DURATION || '30s',
      gracefulStop: '0s',
    },
  },
};

export default async function () {
  await client.chat({ messages, max_tokens: maxTokens });
}

// One JSON line for scripts/bench.sh, same fields as bench/bareclient prints.
export function handleSummary(data) {
  const m = (name, field) => (data.metrics[name] ? data.metrics[name].values[field] || 0 : 0);
  const durationSec = data.state.testRunDurationMs / 1000;
  const outputTokens = m('llm_output_tokens', 'count');
  const summary = {
    client: `k6 gapSamples=${__ENV.GAP_SAMPLES || 'event'}${__ENV.SERVER_METRICS ? ' serverMetrics' : ''}`,
    vus: parseInt(__ENV.VUS || '50', 10),
    durationSec,
    requests: m('llm_requests', 'count'),
    failed: m('llm_failed', 'passes'),
    outputTokens,
    tokensPerSec: outputTokens / durationSec,
  };
  const out = { stdout: JSON.stringify(summary) + '\n' };
  if (__ENV.SUMMARY_FILE) {
    out[__ENV.SUMMARY_FILE] = JSON.stringify(summary) + '\n';
  }
  return out;
}
