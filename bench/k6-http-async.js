// The k6/http side of the per-call benchmark, asynchronous (make bench-calls):
// the request bench/k6-http.js posts, made with k6's own http.asyncRequest and
// awaited, as the module's chat() is. k6's promise, its event loop and the
// goroutine the request runs on cost k6's own HTTP module this much more than
// http.post: the part of the module's difference to http.post that an
// awaited call brings, whoever makes it.
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 -e MAX_TOKENS=4 bench/k6-http-async.js
import http from 'k6/http';
import { callsOptions, callsSummary, chatURL, chatBody, jsonParams } from './k6-calls-summary.js';

export const options = callsOptions;

export default async function () {
  await http.asyncRequest('POST', chatURL, chatBody, jsonParams);
}

export function handleSummary(data) {
  return callsSummary(data, 'k6/http chat, asyncRequest');
}
