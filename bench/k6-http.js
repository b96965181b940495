// The k6/http side of the per-call benchmark (make bench-calls): the same
// streamed request bench/k6-stream.js makes through the module, posted with
// k6's own http.post and its body read whole: no event parsed, no token
// timed. What k6 itself spends per request is the level the module's
// per-call cost is held to.
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 -e MAX_TOKENS=4 bench/k6-http.js
import http from 'k6/http';
import { callsOptions, callsSummary, chatURL, chatBody, jsonParams } from './k6-calls-summary.js';

export const options = callsOptions;

export default function () {
  http.post(chatURL, chatBody, jsonParams);
}

export function handleSummary(data) {
  return callsSummary(data, 'k6/http chat');
}
