// The k6 side of the accuracy benchmark (scripts/accuracy.sh → bench/accuracy):
// STREAMS concurrent streams (STREAMS_PER_VU per VU, each VU running that many
// loops at once), looping chat calls for DURATION, then letting the open ones
// finish. Every finished call leaves one record: its request id, TTFB, TTFT
// and gaps, which bench/accuracy joins with llm-sim's ground-truth trace. The
// records are kept in memory and written to the console (run with
// --console-output FILE --log-format raw) when the VU's loops are done, as the
// floor (bench/bareclient) writes its own at the end: turning them into JSON
// lines while the streams run would be the benchmark's own work on the machine
// it measures, taking the CPU the readers of other streams need to date their
// tokens. The client runs with default options; one call in GAPS_EVERY (4)
// asks for result.gaps, which the gap error is read from: turning every call's
// gaps into a JS array would be the benchmark's own garbage, collected on the
// readers' time, and a quarter of the calls still give the gap error some
// 100 000 gaps a level.
import { sleep } from 'k6';
import exec from 'k6/execution';
import { Client } from 'k6/x/llmstream';

const streams = parseInt(__ENV.STREAMS || '1', 10);
const perVU = Math.max(1, Math.min(streams, parseInt(__ENV.STREAMS_PER_VU || '10', 10)));
const vus = Math.ceil(streams / perVU);
const durationMs = parseInt(__ENV.DURATION_MS || '15000', 10);
const maxTokens = parseInt(__ENV.MAX_TOKENS || '200', 10);

// GAPS=0 leaves result.gaps off (the memory benchmark measures the defaults).
// LLM_HTTP ('1.1', '2', 'auto') is the client's http option (make accuracy
// passes its own on): over '2' the streams of a VU share one h2c connection
// to llm-sim, as the floor's goroutines then share one per STREAMS_PER_VU.
const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-accuracy',
  ...(__ENV.LLM_HTTP ? { http: __ENV.LLM_HTTP } : {}),
});
const gapsEvery = __ENV.GAPS === '0' ? 0 : Math.max(1, parseInt(__ENV.GAPS_EVERY || '4', 10));
// The floor's prompt (bench/bareclient), and a seed per call: llm-sim draws an
// answer's length from the prompt and the seed, so without one every answer
// of the staggered shape would have the same length.
const messages = [{ role: 'user', content: 'Write a long story.' }];
let calls = 0;
const spreadMs = parseInt(__ENV.START_SPREAD_MS || '0', 10);

export const options = {
  scenarios: {
    accuracy: {
      executor: 'per-vu-iterations',
      vus,
      iterations: 1,
      maxDuration: `${Math.ceil(durationMs / 1000) + 120}s`,
    },
  },
};

// The VU's records, written when its loops are done, 50 lines to a
// console.log (each takes k6's logger lock, which all VUs share).
const records = [];
function flush() {
  for (let i = 0; i < records.length; i += 50) {
    console.log(records.slice(i, i + 50).map((r) => JSON.stringify(r)).join('\n'));
  }
  records.length = 0;
}

// Every loop makes at least one call, then more until the end.
async function loop(end) {
  let n = 0;
  do {
    const gaps = gapsEvery > 0 && n++ % gapsEvery === 0;
    const seed = exec.vu.idInTest * 1000000 + calls++;
    const r = await client.chat({ messages, max_tokens: maxTokens, seed }, { gaps });
    if (__ENV.LOG_CALLS === '0') {
      continue;
    }
    records.push({
      id: r.requestId, ok: r.ok, ttfb: r.ttfb, ttft: r.ttft, gaps: r.gaps, chunks: r.chunks, lag: r.clientLag, late: r.ttftLate, send: r.sendWait,
      error: r.error ? r.error.type : undefined,
    });
  } while (Date.now() < end);
}

export default async function () {
  const end = exec.scenario.startTime + durationMs;
  if (spreadMs > 0) {
    // VU i of n starts (i - 1) / n of START_SPREAD_MS late: the VUs ramp up
    // instead of starting together (the guide's advice for the first wave).
    sleep(((exec.vu.idInTest - 1) / vus) * spreadMs / 1000);
  }
  const first = (exec.vu.idInTest - 1) * perVU;
  const mine = Math.min(perVU, streams - first);
  const loops = [];
  for (let i = 0; i < mine; i++) {
    loops.push(loop(end));
  }
  await Promise.all(loops);
  flush();
}

export function handleSummary() {
  return {};
}
