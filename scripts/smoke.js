// The smoke test the k6 extension registry runs (`xk6 lint` looks for a smoke.js and runs it
// with the built k6, no server and no options): it needs no network and fails the run when
// the module misbehaves. It loads the module, draws from the synthetic dataset, and sends a
// call to a loopback port nothing listens on: the call must resolve (not throw) as a failed
// call of type "network" with its times unknown (null), and k6 must have counted it.
// The full end-to-end tests run against llm-sim (make e2e).
import { check } from 'k6';
import { Client, Dataset, version } from 'k6/x/llmstream';

const data = Dataset.synthetic({ seed: 1, mix: { short: 1 } });
// Port 1 (tcpmux) is reserved and nothing on a test machine listens there: refused at once.
const client = new Client({ baseURL: 'http://127.0.0.1:1/v1', model: 'smoke', retry: { attempts: 1 } });

export const options = {
  iterations: 1,
  thresholds: {
    checks: ['rate==1'], // a failed check fails the run (exit 99)
    llm_errors: ['count==1'], // the refused call was counted
  },
};

export default async function () {
  check(version, { 'version is set': (v) => typeof v === 'string' && v.length > 0 });
  const item = data.next();
  check(item, {
    'a synthetic prompt': (i) => i.category === 'short' && i.promptTokens > 0 && i.messages.length > 0,
  });
  const res = await client.chat({ messages: item.messages, max_tokens: 8 });
  check(res, {
    'a refused connection is a failed call': (r) => !r.ok,
    'classified as network': (r) => !r.ok && r.error.type === 'network',
    'its first-token time is unknown, not 0': (r) => r.ttft === null,
  });
}
