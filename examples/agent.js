// An agent job as users run them: the model asks for tools, the tools run, their results go
// back, and the model answers; k6 checks the whole job's time, how much of it was the model
// and how much the tools, and how many steps it took.
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/agent.js
// llm-sim answers with tool calls when asked (X-Sim-Tool-Calls: two parallel calls, then
// one, then text); a real model decides by itself and ignores the header.
import { check } from 'k6';
import { Client } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-large',
  apiKey: __ENV.LLM_API_KEY,
  name: 'agent',
});

// #region agent
const agent = client.agent({
  system: 'You plan trips. Use the tools, then answer in one paragraph.',
  body: { max_tokens: 128 },
  params: { headers: { 'X-Sim-Tool-Calls': '2,1' } },
  maxSteps: 6,
  tools: {
    // A script function: its own time is measured as the job's tool time.
    weather: {
      description: 'The forecast for a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      run: ({ city }) => `Sunny in ${city}, 21 °C`,
    },
    // An async function works the same way: the job waits for its promise.
    hotels: {
      description: 'Hotels with rooms free in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' }, nights: { type: 'integer' } } },
      run: async ({ city }) => [{ name: `${city} Central`, price: 120 }],
    },
    // A canned result with the latency a real service would add.
    flights: { result: 'LH 123 at 09:40', latency: '150ms', description: 'Flights to a city' },
  },
});
// #endregion

export const options = {
  vus: 2,
  duration: __ENV.DURATION || '10s',
  // #region thresholds
  thresholds: {
    llm_job_duration: ['p(95)<10000'],
    llm_job_failed: ['rate<0.01'],
    llm_job_steps: ['max<=6'],
    llm_ttft: ['p(95)<3000'],
  },
  // #endregion
};

// #region run
export default async function () {
  const job = await agent.run('Plan two days in Lisbon next week.');
  check(job, {
    'job done': (j) => j.ok && j.text !== null,
    'tools were called': (j) => j.rounds >= 1 && (j.toolTime ?? 0) > 0,
    'no bad tool calls': (j) => j.findings.length === 0,
  });
  if (!job.ok) console.error(JSON.stringify(job.error));
}
// #endregion
