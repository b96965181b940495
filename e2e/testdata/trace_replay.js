// A Mooncake trace replayed against llm-sim: each call logs its credit (the
// row, its offset) and what the server counted (prompt and cached tokens).
import { Client, Schedule, report } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim-fast' });
// FROM_DISK=1 reads it straight from the disk (TRACE relative to this script,
// as open() resolves it).
const trace = Schedule.trace(__ENV.TRACE, {
  rateScale: Number(__ENV.RATE_SCALE || 1), exactOutput: true, fromDisk: __ENV.FROM_DISK === '1',
});

export const options = {
  scenarios: { replay: { executor: 'constant-vus', vus: 16, duration: __ENV.DURATION || '6s', gracefulStop: '0s' } },
};

export default async function () {
  const c = trace.next();
  if (c === null || !c.body) return;
  const r = await client.chat(c.body);
  console.log(`ROW ${JSON.stringify({
    seq: c.seq, row: c.row, id: r.requestId, offset: c.offset, input: c.inputTokens, output: c.outputTokens,
    delay: r.dispatchDelay, prompt: r.usage && r.usage.promptTokens, cached: r.usage && r.usage.cachedTokens,
    completion: r.usage && r.usage.completionTokens,
  })}`);
}

export function handleSummary(data) {
  return report(data, { json: __ENV.LLM_RECORD });
}
