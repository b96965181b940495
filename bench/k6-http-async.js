// The k6/http side of the per-call benchmark, asynchronous (make bench-calls):
// the request bench/k6-http.js posts, made with k6's own http.asyncRequest and
// awaited, as the module's chat() is. k6's promise, its event loop and the
// goroutine the request runs on cost k6's own HTTP module this much more than
// http.post: the part of the module's difference to http.post that an
// awaited call brings, whoever makes it.
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 -e MAX_TOKENS=4 bench/k6-http-async.js
import http from 'k6/http';
import { callsOptions, callsSummary } from './k6-calls-summary.js';

const url = `${__ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1'}/chat/completions`;
const body = JSON.stringify({
  model: __ENV.LLM_MODEL || 'sim-fast',
  messages: [{ role: 'user', content: 'Write a long story.' }],
  max_tokens: parseInt(__ENV.MAX_TOKENS || '1000', 10),
  stream: true,
  stream_options: { include_usage: true },
});
const params = { headers: { 'Content-Type': 'application/json' } };

export const options = callsOptions;

export default async function () {
  await http.asyncRequest('POST', url, body, params);
}

export function handleSummary(data) {
  return callsSummary(data, 'k6/http chat, asyncRequest');
}
