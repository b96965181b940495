// 40 calls against an llm-sim that disconnects half of its streams after
// their fifth token (--fault disconnect@5:0.5): the failed calls measured a
// TTFT and some gaps before they failed, and never completed an answer.
// failedcalls_test.go compares k6's samples with the run record's counts.
import { check } from 'k6';
import { Client, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-fast', gapSamples: 'event' });

export const options = {
  scenarios: { calls: { executor: 'shared-iterations', vus: 4, iterations: 40, maxDuration: '60s' } },
  thresholds: { checks: ['rate==1'] },
};

export default async function () {
  const r = await client.chat({ messages: [{ role: 'user', content: 'tell me a story' }], max_tokens: 24 });
  // The JS result follows each figure's rule: a failed call keeps what it
  // measured (TTFT, gaps) and has no figure of a whole answer.
  check(r, {
    'a failed call has no e2e, tpot or tokensPerSec': (x) => x.ok || (x.e2e === null && x.tpot === null && x.tokensPerSec === null),
    'a call that got a token has its ttft': (x) => x.chunks === 0 || x.ttft !== null,
  });
}

export function handleSummary(data) {
  return report(data, { json: __ENV.LLM_RECORD, stdout: false });
}
