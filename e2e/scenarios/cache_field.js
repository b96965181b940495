// llm-sim: --model sim=small --set cached_tokens_field=prompt_tokens_detail --seed 1
// Calls that share a long system prompt, one after another, against a server with a prefix
// cache that reports it as llm-d's simulator does (usage.prompt_tokens_detail, singular).
// Each call's cache state and cached-token count go to the console (CALL lines), for the
// test to hold against the server's trace; run against cached_tokens_field=none, the same
// calls have no cached count at all.
import { Client } from 'k6/x/llmstream';

const client = new Client({ baseURL: __ENV.LLM_BASE_URL, model: 'sim', gapSamples: 'off' });

const system = 'You are a careful assistant for a logistics company. '.repeat(40);

export const options = { vus: 1, iterations: Number(__ENV.CALLS || 4) };

export default async function () {
  const r = await client.chat({
    messages: [{ role: 'system', content: system }, { role: 'user', content: `Question ${__ITER}: where is my parcel?` }],
    max_tokens: 4,
  });
  console.log('CALL ' + JSON.stringify({
    ok: r.ok, requestId: r.requestId, cache: r.cache, usage: r.usage, finishSource: r.finishSource,
  }));
}
