// The k6/http side of the per-call benchmark (make bench-calls): the same
// streamed request bench/k6-stream.js makes through the module, posted with
// k6's own http.post and its body read whole: no event parsed, no token
// timed. What k6 itself spends per request is the level the module's
// per-call cost is held to.
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 -e MAX_TOKENS=4 bench/k6-http.js
import http from 'k6/http';
import { callsOptions, callsSummary } from './k6-calls-summary.js';

const url = `${__ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1'}/chat/completions`;
// The body the module sends for chat({messages, max_tokens}) with the
// openai protocol: streamed, with the usage in the last event.
const body = JSON.stringify({
  model: __ENV.LLM_MODEL || 'sim-fast',
  messages: [{ role: 'user', content: 'Write a long story.' }],
  max_tokens: parseInt(__ENV.MAX_TOKENS || '1000', 10),
  stream: true,
  stream_options: { include_usage: true },
});
const params = { headers: { 'Content-Type': 'application/json' } };

export const options = callsOptions;

export default function () {
  http.post(url, body, params);
}

export function handleSummary(data) {
  return callsSummary(data, 'k6/http chat');
}
