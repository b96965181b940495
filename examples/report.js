// A mixed run whose end-of-test summary says where the time went: k6's usual
// summary plus a per-category LLM section, an HTML report with charts, and a JSON
// run record that the next run can compare itself with.
//
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/report.js   # reports/report.{html,json}
//   ./k6 run -e LLM_BASE_URL=... -e LLM_BASELINE=$PWD/reports/report.json examples/report.js   # compare
// (loadBaseline reads a relative path from the script's directory, as open() does;
// report() writes its files relative to where k6 runs: hence $PWD.)
import { Client, loadBaseline, report } from 'k6/x/llmstream';

// #region baseline
const baseline = __ENV.LLM_BASELINE;
if (baseline) {
  loadBaseline(baseline); // also drives llm_regression live, per category
}
// #endregion

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-large',
  name: 'chat',
  gapSamples: 'request', // the report keeps its own gap distribution
});

const words = 'the quick brown fox jumps over the lazy dog while the engine batches requests '.split(' ');
function text(n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(words[(i * 7 + n) % words.length]);
  return out.join(' ');
}

const kinds = [
  { category: 'short', prompt: 20, maxTokens: 16 },
  { category: 'medium', prompt: 300, maxTokens: 32 },
  { category: 'long_output', prompt: 30, maxTokens: 64 },
];

export const options = {
  vus: 16, // ≥ 30 calls per category in 15 s, even against a slower server: the baseline's bootstrap needs them
  duration: __ENV.DURATION || '15s',
  thresholds: {
    'llm_ttft{category:short}': ['p(95)<3000'],
    'llm_ttft{category:medium}': ['p(95)<3000'],
    llm_failed: ['rate<0.01'],
    llm_regression: ['rate<0.5'], // with a baseline: fewer than half the calls slower than its P95
  },
};

export default async function () {
  const k = kinds[(__VU + __ITER) % kinds.length];
  await client.chat(
    { messages: [{ role: 'user', content: text(k.prompt) }], max_tokens: k.maxTokens },
    { tags: { category: k.category } },
  );
}

// #region summary
export function handleSummary(data) {
  const dir = __ENV.LLM_REPORT_DIR || 'reports';
  return report(data, {
    html: `${dir}/report.html`,
    json: `${dir}/report.json`,
    baseline,
    meta: { example: 'report.js' },
  });
}
// #endregion
