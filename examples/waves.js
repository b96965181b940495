// llm-sim: --model sim-large=demo --seed 1
// Waves and bursts. Production traffic is not a flat line: it rises and falls over the
// day and arrives in clumps. Two scenarios in a row: a wave that climbs, falls back and
// climbs again (does the service recover after the peak?), then bursty open-model
// arrivals (gamma gaps, cv 3) at 4 calls/s on average, as clumped as real traffic.
// The report's waves table says how long TTFT took to come back after each peak.
// (Warm-up first, left out of the report: examples/warmup.js.)
//
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/waves.js
import { sleep } from 'k6';
import { Client, Dataset, Arrivals, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-large',
  name: 'waves',
  gapSamples: 'request',
});

const prompts = Dataset.synthetic({ seed: 7, mix: { short: 3, medium: 1 } });
const bursts = Arrivals.bursty({ rate: 4, cv: 3, seed: 1 }); // 4 calls/s on average, in clumps

const secs = parseInt(__ENV.DURATION || '40s', 10); // DURATION in seconds ('40s')
const part = (f) => `${Math.max(1, Math.round(secs * f))}s`;

export const options = {
  scenarios: {
    wave: {
      executor: 'ramping-vus', startVUs: 1, exec: 'ask',
      stages: [
        { duration: part(0.15), target: 8 }, { duration: part(0.15), target: 1 },
        { duration: part(0.15), target: 8 }, { duration: part(0.15), target: 1 },
      ],
      gracefulRampDown: '2s',
    },
    bursts: {
      executor: 'constant-vus', startTime: part(0.6), vus: 16, duration: part(0.4), exec: 'burst',
      gracefulStop: '2s',
    },
  },
  thresholds: {
    'llm_ttft{scenario:wave}': ['p(95)<3000'],
    'llm_ttft{scenario:bursts}': ['p(95)<3000'],
    llm_failed: ['rate<0.01'],
  },
};

export async function ask() {
  const p = prompts.next();
  await client.chat({ messages: p.messages, max_tokens: 32 }, { item: p });
}

export async function burst() {
  sleep(bursts.next()); // wait for this VU's claimed arrival
  await ask();
}

export function teardown() {
  // late > 0: a VU was busy when its arrival came, so the load was not fully open.
  console.log(`bursty arrivals: ${JSON.stringify(bursts.stats())}`);
}

export function handleSummary(data) {
  const dir = __ENV.LLM_REPORT_DIR || 'reports';
  return report(data, { html: `${dir}/waves-report.html`, json: `${dir}/waves-report.json` });
}
