// The k6 side of the soak (scripts/soak.sh → bench/soak): VUS streams at once,
// looping, against llm-sim with random faults, for DURATION. The timeouts are
// tight on purpose: llm-sim's stalls then end as timeout_idle, so the soak
// goes through the cancel paths (watchdog, context, dropped connection) as
// often as through clean ends.
import { Client } from 'k6/x/llmstream';

const clientOptions = {
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-soak',
  name: 'soak',
  // idle must match soakIdleTimeout in bench/soak/main.go.
  timeouts: { connect: '3s', firstToken: '5s', idle: '1s', total: '60s' },
};
// GAP_SAMPLES=default leaves gapSamples unset: the module's default.
if ((__ENV.GAP_SAMPLES || 'request') !== 'default') {
  clientOptions.gapSamples = __ENV.GAP_SAMPLES || 'request';
}
const client = new Client(clientOptions);

const maxTokens = parseInt(__ENV.MAX_TOKENS || '256', 10);
const messages = [{ role: 'user', content: 'Tell me a long story about load testing.' }];

// A threshold that always holds, per error type, makes k6 keep (and report)
// the count of each error type.
const errorTypes = ['timeout_connect', 'timeout_first_token', 'timeout_idle', 'timeout_total', 'http_429',
  'http_4xx', 'http_5xx', 'network', 'stream_error', 'decode', 'truncated', 'canceled'];
const thresholds = {};
for (const t of errorTypes) {
  thresholds[`llm_errors{error_type:${t}}`] = ['count>=0'];
}

export const options = {
  scenarios: {
    soak: {
      executor: 'constant-vus',
      vus: parseInt(__ENV.VUS || '200', 10),
      duration: __ENV.DURATION || '10m',
      gracefulStop: '10s',
    },
  },
  thresholds,
  // 'count' gives handleSummary the number of samples k6 kept of each Trend:
  // bench/soak compares the growth of k6's Trend sample store with it.
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'count'],
};

export default async function () {
  const r = await client.chat({ messages, max_tokens: maxTokens });
  // LOG_FAILURES=1 says how each failure ended, to tell injected faults
  // (stalls after 20 tokens, disconnects after 40…) from anything else.
  if (__ENV.LOG_FAILURES && !r.ok) {
    // A failed call has no e2e (a complete answer's); its last attempt says how long it lasted.
    const lasted = r.attempts.length ? r.attempts[r.attempts.length - 1].e2e : null;
    console.warn(`failure ${r.error.type} chunks=${r.chunks} lasted=${Math.round(lasted)}ms id=${r.requestId}: ${r.error.message}`);
  }
}

export function handleSummary(data) {
  const m = (name, field) => (data.metrics[name] ? data.metrics[name].values[field] || 0 : 0);
  const errors = {};
  for (const t of errorTypes) {
    const n = m(`llm_errors{error_type:${t}}`, 'count');
    if (n > 0) {
      errors[t] = n;
    }
  }
  // Every sample k6 kept for its summary and thresholds, by Trend metric
  // (the module's llm_* and k6's own http_req_*, iteration_duration…).
  const trendSamples = {};
  for (const [name, metric] of Object.entries(data.metrics)) {
    if (metric.type === 'trend') {
      trendSamples[name] = metric.values.count || 0;
    }
  }
  const summary = {
    durationSec: data.state.testRunDurationMs / 1000,
    requests: m('llm_requests', 'count'),
    failed: m('llm_failed', 'passes'),
    outputTokens: m('llm_output_tokens', 'count'),
    errors,
    trendSamples,
  };
  const out = { stdout: JSON.stringify(summary) + '\n' };
  if (__ENV.SUMMARY_FILE) {
    out[__ENV.SUMMARY_FILE] = JSON.stringify(summary) + '\n';
  }
  return out;
}
