// The load every per-call benchmark script runs: VUS VUs (50) looping
// for DURATION (30 s), stopped at once when it ends.
export const callsOptions = {
  scenarios: {
    calls: {
      executor: 'constant-vus',
      vus: parseInt(__ENV.VUS || '50', 10),
      duration: __ENV.DURATION || '30s',
      gracefulStop: '0s',
    },
  },
};

// The one JSON line the per-call benchmark's k6 scripts print for
// scripts/bench.sh (the fields bench/bareclient prints). Calls are the
// module's llm_requests when it ran, else k6's http_reqs; a k6/http run
// reads no tokens, so it has no output token count (null, not 0).
export function callsSummary(data, client) {
  const metric = (name) => data.metrics[name];
  const value = (name, field) => (metric(name) ? metric(name).values[field] || 0 : 0);
  const module = metric('llm_requests') !== undefined;
  const durationSec = data.state.testRunDurationMs / 1000;
  const outputTokens = module ? value('llm_output_tokens', 'count') : null;
  const summary = {
    client,
    vus: parseInt(__ENV.VUS || '50', 10),
    durationSec,
    requests: module ? value('llm_requests', 'count') : value('http_reqs', 'count'),
    failed: module ? value('llm_failed', 'passes') : value('http_req_failed', 'passes'),
    outputTokens,
    tokensPerSec: outputTokens === null ? null : outputTokens / durationSec,
  };
  const out = { stdout: JSON.stringify(summary) + '\n' };
  if (__ENV.SUMMARY_FILE) {
    out[__ENV.SUMMARY_FILE] = JSON.stringify(summary) + '\n';
  }
  return out;
}

// The request bench/k6-stream.js makes through the module for
// chat({messages, max_tokens}) with the openai protocol (streamed, with the
// usage in the last event), as k6/http's scripts post it.
export const chatURL = `${__ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1'}/chat/completions`;
export const chatBody = JSON.stringify({
  model: __ENV.LLM_MODEL || 'sim-fast',
  messages: [{ role: 'user', content: 'Write a long story.' }],
  max_tokens: parseInt(__ENV.MAX_TOKENS || '1000', 10),
  stream: true,
  stream_options: { include_usage: true },
});
export const jsonParams = { headers: { 'Content-Type': 'application/json' } };
