// llm-sim: --model model-a=small --model model-b=large --seed 1
// A/B (or shadow) test: every prompt goes to two endpoints at once — two providers,
// a small and a large model, the current and the candidate deployment. Each Client
// has its own name, so the report keeps them apart (tables, charts and findings per
// client), and because both answer the same dataset item ({ item: p }) it also
// compares them pair by pair: the median difference of TTFT, end-to-end time and
// tokens/s on the same prompts, with a 95 % interval and a verdict.
//
//   ./llm-sim --model model-a=small --model model-b=large &
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/ab-test.js
import { Client, Dataset, report } from 'k6/x/llmstream';

const base = __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1';
// #region clients
const a = new Client({ baseURL: base, model: __ENV.MODEL_A || 'model-a', name: 'a' });
// The second endpoint may be another provider: give it its own baseURL and apiKey.
const b = new Client({ baseURL: __ENV.LLM_BASE_URL_B || base, model: __ENV.MODEL_B || 'model-b', name: 'b' });
// #endregion

const prompts = Dataset.synthetic({ seed: 3, mix: { short: 3, medium: 1 } });

export const options = {
  vus: 3,
  duration: __ENV.DURATION || '30s',
  thresholds: { llm_failed: ['rate<0.01'] },
};

// #region pair
export default async function () {
  const p = prompts.next();
  const body = { messages: p.messages, max_tokens: Math.min(p.maxTokens, 48) };
  // Both at once, as shadow traffic would: neither waits for the other.
  await Promise.all([a.chat(body, { item: p }), b.chat(body, { item: p })]);
}
// #endregion

export function handleSummary(data) {
  const dir = __ENV.LLM_REPORT_DIR || 'reports';
  return report(data, { html: `${dir}/ab-report.html`, json: `${dir}/ab-report.json`, meta: { example: 'ab-test.js' } });
}
