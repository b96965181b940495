// Streams that start together end together: does llm_inter_token_gap (the
// default gapSamples 'sampled') hold the percentiles of every gap? One VU runs
// STREAMS loops of 100-token calls for DURATION_MS, keeps every gap of every
// call (result.gaps) and prints their exact p50 / p90 / p99; the summary line
// has the sampled metric's and how many gaps the cap left out. BENCHMARKS.md,
// "Gap samples in waves", has the commands.
import { Client } from 'k6/x/llmstream';

const streams = parseInt(__ENV.STREAMS || '200', 10);
const durationMs = parseInt(__ENV.DURATION_MS || '20000', 10);
const client = new Client({ baseURL: __ENV.URL, model: 'sim-accuracy' });

export const options = {
  scenarios: { wave: { executor: 'per-vu-iterations', vus: 1, iterations: 1, maxDuration: '120s' } },
  summaryTrendStats: ['p(50)', 'p(90)', 'p(99)'],
};

function q(sorted, p) { return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]; }

export default async function () {
  const end = Date.now() + durationMs;
  const all = [];
  const loops = [];
  for (let i = 0; i < streams; i++) {
    loops.push((async () => {
      while (Date.now() < end) {
        const r = await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 }, { gaps: true });
        if (r.gaps) { for (const g of r.gaps) all.push(g); }
      }
    })());
  }
  await Promise.all(loops);
  all.sort((a, b) => a - b);
  console.log(JSON.stringify({ all: all.length, p50: q(all, 0.5), p90: q(all, 0.9), p99: q(all, 0.99) }));
}

export function handleSummary(data) {
  const g = data.metrics.llm_inter_token_gap;
  const u = data.metrics.llm_gaps_unsampled;
  return { stdout: JSON.stringify({ sampled: g ? g.values : null, unsampled: u ? u.values.count : 0 }) + '\n' };
}
