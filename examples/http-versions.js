// HTTP/1.1 against HTTP/2 under the same load: two clients on one server, one per
// HTTP version, the same prompts at the same time. HTTP/1.1 needs one connection
// per stream in flight (each kept and reused between calls); HTTP/2 multiplexes a
// VU's streams on one connection, so a slow or large stream can hold up the others
// (head-of-line blocking in TCP), and past the server's stream limit another
// connection opens.
// Every llm_* sample carries a proto tag, so thresholds and the report can tell
// the two apart; llm_conn_opened / llm_conn_reused show the connections each made.
//
//   ./llm-sim &        (serves HTTP/1.1 and cleartext HTTP/2, h2c; --tls for TLS)
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/http-versions.js
import { check } from 'k6';
import { Client } from 'k6/x/llmstream';

const base = __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1';
const model = __ENV.LLM_MODEL || 'sim-large';
const h1 = new Client({ baseURL: base, model, name: 'http1', http: '1.1' });
const h2 = new Client({ baseURL: base, model, name: 'http2', http: '2' });

export const options = {
  vus: 4,
  duration: __ENV.DURATION || '20s',
  thresholds: {
    'llm_ttft{proto:HTTP/1.1}': ['p(95)<3000'],
    'llm_ttft{proto:HTTP/2.0}': ['p(95)<3000'],
    'llm_requests{proto:HTTP/1.1}': ['count>0'],
    'llm_requests{proto:HTTP/2.0}': ['count>0'],
    llm_conn_reused: ['rate>0.5'], // streams read to their end hand their connection back
    checks: ['rate==1'],
  },
};

export default async function () {
  const body = { messages: [{ role: 'user', content: 'Name three uses of HTTP/2.' }], max_tokens: 48 };
  const [a, b] = await Promise.all([h1.chat(body), h2.chat(body)]);
  check(a, { 'http1 spoke HTTP/1.1': (r) => r.ok && r.proto === 'HTTP/1.1' });
  check(b, { 'http2 spoke HTTP/2': (r) => r.ok && r.proto === 'HTTP/2.0' });
}
