// llm-sim: --model sim-large=demo --seed 1
// Live conversations: each VU is a user who asks the questions of a ShareGPT-like
// conversation one turn at a time, reads each answer (think time) and asks the next
// one; every turn carries the conversation so far as the server answered it. A session
// header keeps the conversation on one replica behind an affinity router. Compare
// llm_ttft by turn (the history grows; a prefix cache serves most of it) and gate the
// whole conversation with llm_job_duration.
//
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/conversation.js
import exec from 'k6/execution';
import { Client, Dataset } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-large',
  name: 'chat',
});

// Synthetic conversations of 2 to 4 turns, their items one after another in turn
// order: say(item) sends an item's user turn (its canned history is replaced by the
// live one).
const turns = Dataset.synthetic({ seed: 7, mix: { short: 1 }, turns: { min: 2, max: 4 } });

export const options = {
  vus: 4,
  duration: __ENV.DURATION || '30s',
  thresholds: {
    llm_job_duration: ['p(95)<30000'], // the user's whole conversation, think time included
    'llm_ttft{turn:1}': ['p(95)<5000'],
    llm_job_failed: ['rate<0.01'],
  },
};

// #region conversation
export default async function () {
  const conv = client.conversation({
    system: 'You are a concise assistant.',
    body: { max_tokens: 32 },
    think: { dist: 'lognormal', median: '800ms', sigma: 0.4 },
    session: { header: 'X-Session-Affinity' },
    history: { maxTurns: 8 },
    category: 'chat',
  });
  // Start at a conversation's first turn and say its turns in order.
  let i = exec.scenario.iterationInTest % turns.size();
  let item = turns.at(i);
  while (item.turn !== 1) item = turns.at(++i);
  const id = item.conversation;
  do {
    const r = await conv.say(item);
    if (r === null || !r.ok) break; // a failed turn ends the conversation
    item = turns.at(++i);
  } while (item.conversation === id);
  conv.end(); // the job figures: llm_job_duration, llm_job_model_time, llm_job_think_time…
}
// #endregion
