// llm-sim: --model sim-large=demo --model sim-small=fast --fault status=503:0.1 --fault ttft=1500:0.1 --fault stall=700@3:0.1 --fault error@2:0.03 --set power_idle_w=60 --set power_per_request_w=40 --set spec_decode_acceptance=[0.8,0.6] --seed 3
//
// A run that fills every panel of the Grafana dashboard and of the web dashboard's
// LLM tab (docs/dashboards.md): two length classes with a shared system prompt (cache
// hits), prices (cost), an SLO (goodput), and a flaky server: first tokens that come too late (retried),
// 503s (handed to a fallback client), pauses mid-stream (stalls), errors inside the stream;
// a batch of chunks embedded every few iterations (the embeddings and rerank panels),
// calls on a schedule's due times (the dispatch-delay panel), short live conversations
// and agent jobs (the conversations and agents panels).
//
//   ./llm-sim --model sim-large=demo --model sim-small=fast --fault status=503:0.08 \
//       --fault ttft=1500:0.05 --fault stall=700@3:0.1 --fault error@2:0.03 \
//       --set power_idle_w=60 --set power_per_request_w=40 --set spec_decode_acceptance=[0.8,0.6] &
//   K6_PROMETHEUS_RW_SERVER_URL=http://127.0.0.1:9090/api/v1/write \
//   K6_PROMETHEUS_RW_TREND_STATS='p(50),p(95),p(99),avg' \
//   ./k6 run -o experimental-prometheus-rw -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/dashboards.js
import { Client, Dataset, Schedule } from 'k6/x/llmstream';

const base = __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1';

// Prices per million tokens (made up for the simulator): llm_cost for the cost panels.
const prices = { input: 2.5, cachedInput: 1.25, output: 10, currency: 'USD' };

const fallback = new Client({ baseURL: base, model: 'sim-small', name: 'fallback', prices });

const client = new Client({
  baseURL: base,
  model: 'sim-large',
  name: 'primary',
  prices,
  timeouts: { connect: '3s', firstToken: '1s', idle: '5s', total: '1m' },
  stallThreshold: '500ms',
  slo: { ttft: '1s', tpot: '100ms' },
  retry: { attempts: 2, on: ['timeout_first_token'], backoff: { base: '20ms', max: '100ms' } },
  fallback,
  fallbackOn: ['http_5xx'],
  // The simulator's own /metrics (vLLM's families) and its DCGM-shaped GPU
  // exporter: the server and energy panels.
  serverMetrics: [
    { url: `${base.replace(/\/v1\/?$/, '')}/metrics`, source: 'engine', interval: '1s' },
    { url: `${base.replace(/\/v1\/?$/, '')}/dcgm/metrics`, source: 'dcgm', interval: '500ms' },
  ],
});

// Every prompt starts with one of two 300-token system prompts: the simulator's
// prefix cache serves them after the first call, so llm_cache_hit has both values.
const prompts = Dataset.synthetic({
  seed: 3,
  mix: { short: 3, medium: 1 },
  sharedPrefix: { count: 2, tokens: 300, fraction: 1 },
});

export const options = {
  vus: 6,
  duration: __ENV.DURATION || '20s',
  thresholds: {
    'llm_ttft{category:short}': ['p(95)<5000'],
    llm_failed: ['rate<0.2'], // the injected faults that neither retry nor fallback absorb
  },
};

// A few calls sent on an open-model schedule's due times: the dispatch-delay panel. One VU
// sends them, at a rate it keeps up with: a credit still unsent when the test ends is a
// failed call (error type dropped).
const arrivals = Schedule.poisson({ rate: 2, duration: __ENV.DURATION || '20s', seed: 3 });

// A short agent job whose model calls one tool it has and one it was not given, and
// reasons before each step (llm-sim's X-Sim-Reasoning): the job panels' tool time and
// bad tool calls, and the reasoning time.
const agent = client.agent({
  body: { max_tokens: 24 },
  params: { headers: { 'X-Sim-Tool-Calls': '2', 'X-Sim-Tool-Fault': 'unknown_tool', 'X-Sim-Reasoning': '6' } },
  tools: { weather: { result: 'sunny', latency: '50ms' } },
});

const chunks = Dataset.chunks({ seed: 3, tokens: 64, count: 64, batch: { '1': 3, '8': 1 } });

export default async function () {
  const p = prompts.next();
  if (__VU === 1) { // one VU of six on the schedule, so the other panels keep their load
    const credit = arrivals.next(); // sleeps until the credit is due; null once the schedule is over
    if (credit !== null) await client.chat({ messages: p.messages, max_tokens: 8 }, { item: p });
    return;
  }
  await client.chat({ messages: p.messages, max_tokens: Math.min(p.maxTokens, 24) }, { item: p });
  if (__VU === 2 && __ITER % 2 === 0) { // a short live conversation: the job panels
    const conv = client.conversation({ body: { max_tokens: 8 }, think: '100ms', session: { header: 'X-Session-Affinity' } });
    for (const q of ['Why is the sky blue?', 'And at sunset?', 'Thanks!']) {
      const r = await conv.say(q);
      if (r === null || !r.ok) break;
    }
    conv.end();
  }
  if (__VU === 3 && __ITER % 2 === 0) await agent.run('What is the weather in Oslo?');
  if (__ITER % 3 === 0) {
    const b = chunks.next();
    await client.embed({ input: b.inputs, encodingFormat: 'base64' }, { tags: { category: b.category } });
  }
}
