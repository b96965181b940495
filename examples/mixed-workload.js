// llm-sim: --model sim-large=demo --model sim-small=small --set decode_base_ms=8 --seed 1
// A mixed workload by length class (docs/guide.md): short questions, medium tasks,
// long-context documents and long-output requests, drawn in fixed proportions over
// the whole test, with thresholds per class — a fixed short prompt would say
// nothing about production, where prompts are mixed and often long.
//
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/mixed-workload.js
//
// It ends with the report: where the time went and the findings after k6's summary,
// the HTML page and the run record under reports/ (or LLM_REPORT_DIR).
//
// The prompts are synthetic (no customer data), and each one's token count is exact
// for the o200k_base tokenizer; the same seed gives the same prompts on every run.
import { check } from 'k6';
import { Client, Dataset, report } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-large',
  apiKey: __ENV.LLM_API_KEY,
  name: 'mixed',
  timeouts: { connect: '3s', firstToken: '20s', idle: '30s', total: '5m' },
});

// Built once per k6 process, shared by every VU. Every 10 draws hold 3 short, 5 medium,
// 1 long-context and 1 long-output prompt, whichever VUs draw them.
// #region prompts
const prompts = Dataset.synthetic({
  seed: Number(__ENV.SEED || 7),
  mix: { short: 3, medium: 5, long_context: 1, long_output: 1 },
});
// #endregion

export const options = {
  scenarios: {
    mixed: {
      executor: 'constant-vus',
      vus: Number(__ENV.VUS || 6),
      duration: __ENV.DURATION || '1m',
      // Long-output answers take tens of seconds on the demo profile; requests still
      // streaming 5 s after the end are cut off: k6 counts them as "interrupted
      // iterations", the module neither records them nor counts them as failures.
      gracefulStop: '5s',
    },
  },
  // #region thresholds
  thresholds: {
    // Time to first token depends on prompt length (prefill): one bound per class.
    'llm_ttft{category:short}': ['p(95)<3000'],
    'llm_ttft{category:medium}': ['p(95)<4000'],
    'llm_ttft{category:long_context}': ['p(95)<6000'],
    // Long outputs load the decode phase: watch the time per output token.
    'llm_tpot{category:long_output}': ['p(95)<300'],
    'llm_e2e{category:short}': ['p(95)<15000'],
    llm_failed: ['rate<0.05'],
    checks: ['rate>0.95'],
  },
  // #endregion
};

export function setup() {
  const info = prompts.info();
  for (const c of info.categories) {
    console.log(`${c.name}: ${c.items} prompts, ${c.minPromptTokens}-${c.maxPromptTokens} tokens, ` +
      `max_tokens ${c.minMaxTokens}-${c.maxMaxTokens}, ${(100 * c.share).toFixed(0)}% of draws`);
  }
}

// #region draw
export default async function () {
  const p = prompts.next();
  // {item: p} tags the call with p.category (and p.turn), which the thresholds select.
  const r = await client.chat({ messages: p.messages, max_tokens: p.maxTokens }, { item: p });
  check(r, { 'answer streamed': (x) => x.ok && x.outputTokens > 0 });
}
// #endregion

export function handleSummary(data) {
  const dir = __ENV.LLM_REPORT_DIR || 'reports';
  return report(data, {
    html: `${dir}/mixed-workload.html`,
    json: `${dir}/mixed-workload.json`,
    meta: { example: 'mixed-workload.js' },
  });
}
