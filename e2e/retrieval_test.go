package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// retrievalScript makes, through the k6 binary against llm-sim: a batch of
// 32 embeddings in each embeddings API (OpenAI's also in base64), a rerank
// in both rerank formats, a 503 retried and then failed, an answer later
// than the first-token timeout, and a prompt with an image in each chat
// protocol that takes images. Thresholds per tag make any miss fail the run.
const retrievalScript = `
import { Client, Dataset, report } from 'k6/x/llmstream';
import { check } from 'k6';

const SIM = __ENV.SIM_URL;
const embedders = {
  openai: new Client({ baseURL: SIM + '/v1', model: 'sim', name: 'openai' }),
  ollama: new Client({ baseURL: SIM, protocol: 'ollama', model: 'sim', name: 'ollama' }),
  tei: new Client({ baseURL: SIM, model: 'sim', name: 'tei' }),
  gemini: new Client({ baseURL: SIM + '/v1beta', protocol: 'gemini', model: 'sim', name: 'gemini' }),
};
const flaky = new Client({ baseURL: SIM + '/v1', model: 'sim', name: 'flaky',
  retry: { attempts: 2, on: ['http_5xx'], backoff: { base: '10ms' } } });
const chunks = Dataset.chunks({ tokens: 32, count: 64, batch: { '32': 1 } });
const shots = Dataset.synthetic({ mix: { short: 1 }, images: { count: 1, width: 64, height: 64, format: 'png' } });
const chats = {
  'openai-chat': [new Client({ baseURL: SIM + '/v1', model: 'sim', name: 'img-openai' }), (m) => ({ messages: m, max_tokens: 4 })],
  'anthropic': [new Client({ baseURL: SIM + '/v1', protocol: 'anthropic', model: 'sim', name: 'img-anthropic' }), (m) => ({ messages: m, max_tokens: 4 })],
  'ollama': [new Client({ baseURL: SIM, protocol: 'ollama', model: 'sim', name: 'img-ollama' }), (m) => ({ messages: m, options: { num_predict: 4 } })],
  'gemini': [new Client({ baseURL: SIM + '/v1beta', protocol: 'gemini', model: 'sim', name: 'img-gemini' }),
    (m) => ({ contents: [{ role: 'user', parts: [{ text: m[m.length - 1].content }] }], generationConfig: { maxOutputTokens: 4 } })],
};

export const options = {
  iterations: 1,
  thresholds: {
    checks: ['rate==1'],
    'llm_requests{op:embed}': ['count==7'],
    'llm_failed{op:embed,name:openai}': ['rate==0'],
    'llm_errors{op:embed,error_type:http_5xx}': ['count==1'],
    'llm_errors{op:embed,error_type:timeout_first_token}': ['count==1'],
    'llm_attempts{op:embed,name:flaky}': ['count==3'],
    'llm_requests{op:rerank}': ['count==2'],
    'llm_failed{op:rerank}': ['rate==0'],
    'llm_batch_size{op:embed,name:tei}': ['avg==32'],
    'llm_input_tokens{op:embed,name:openai}': ['count>=2048'],
    'llm_failed{category:image}': ['rate==0'],
    'llm_requests{category:image}': ['count==4'],
    'llm_request_bytes{category:image}': ['min>100'],
  },
};

export default async function () {
  const b = chunks.next();
  for (const [api, client] of Object.entries(embedders)) {
    const r = await client.embed({ input: b.inputs, api: api === 'tei' ? 'tei' : undefined });
    check(r, { ['embed ' + api]: (x) => x.ok && x.count === 32 && x.batchSize === 32 && x.dimension > 0 && x.duration >= x.ttfb });
  }
  const b64 = await embedders.openai.embed({ input: b.inputs, encodingFormat: 'base64', dimensions: 256 });
  check(b64, { 'embed base64': (x) => x.ok && x.dimension === 256 && x.inputTokens >= 1024 });

  for (const api of ['cohere', 'tei']) {
    const r = await embedders.openai.rerank({ api, query: b.inputs[0], documents: b.inputs.slice(0, 8), topN: 3 });
    check(r, { ['rerank ' + api]: (x) => x.ok && x.results.length === 3 && x.results[0].score >= x.results[2].score && x.batchSize === 8 });
  }

  const retried = await flaky.embed({ input: 'a' }, { headers: { 'X-Sim-Fault': 'status=503' } });
  check(retried, { '503 retried then failed': (x) => !x.ok && x.error.type === 'http_5xx' && x.retries === 1 });
  const late = await flaky.embed({ input: 'a' }, { headers: { 'X-Sim-Fault': 'headers_delay=1500' }, timeouts: { firstToken: '200ms' } });
  check(late, { 'late answer timed out': (x) => !x.ok && x.error.type === 'timeout_first_token' && x.duration === null });

  for (const [p, [client, body]] of Object.entries(chats)) {
    const item = shots.next();
    const r = await client.chat(body(item.messages), { item, tags: { category: 'image' } });
    check(r, { ['image prompt ' + p]: (x) => x.ok && x.outputTokens > 0 });
  }
}

export function handleSummary(data) {
  return report(data, { stdout: true });
}
`

func TestRetrievalCallsAndImagePrompts(t *testing.T) {
	sim := startSim(t, "--model", "sim=fast", "--seed", "1")
	script := filepath.Join(t.TempDir(), "retrieval.js")
	require.NoError(t, os.WriteFile(script, []byte(retrievalScript), 0o600))
	code, out := runK6(t, script, map[string]string{"SIM_URL": sim})
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "Embeddings and rerank (non-streamed: no TTFT or gaps)")
	require.Contains(t, out, "embed ")
	require.Contains(t, out, "rerank ")
	require.Contains(t, out, "TTFT by images in the prompt")
}

// ragScheduleScript is a RAG-shaped open-model test: each credit of the
// schedule opens with an embed, then a rerank and a chat.
const ragScheduleScript = `
import { Client, Schedule, report } from 'k6/x/llmstream';
import { check } from 'k6';

const client = new Client({ baseURL: __ENV.SIM_URL + '/v1', model: 'sim' });
const sched = Schedule.constant({ rate: 20, duration: '2s' });

export const options = {
  scenarios: { rag: { executor: 'constant-vus', vus: 4, duration: '3s', gracefulStop: '0s' } },
  thresholds: { checks: ['rate==1'], 'llm_requests{op:embed}': ['count>=30'] },
};

export default async function () {
  if (sched.next() === null) return;
  const e = await client.embed({ input: ['what is the refund policy'] });
  const r = await client.rerank({ query: 'refund', documents: ['a', 'b', 'c'] });
  const c = await client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 2 });
  check(e, { 'the embed took the due time': (x) => x.ok && x.dueAt !== null && x.dispatchDelay !== null && x.e2eFromDue >= x.duration });
  check(r, { 'the rerank after it has none': (x) => x.ok && x.dueAt === null && x.dispatchDelay === null });
  check(c, { 'nor the chat': (x) => x.ok && x.dueAt === null && x.ttftFromDue === null });
}

export function handleSummary(data) {
  return report(data, { json: __ENV.LLM_RECORD });
}
`

// TestScheduledEmbedTakesTheDueTime: under a schedule, the embed that
// opens each iteration is the credit's send; the calls after it have no due
// time, and the run record's embed section carries the due-time figures.
func TestScheduledEmbedTakesTheDueTime(t *testing.T) {
	sim := startSim(t, "--model", "sim=fast", "--seed", "1")
	dir := t.TempDir()
	script, record := filepath.Join(dir, "rag.js"), filepath.Join(dir, "record.json")
	require.NoError(t, os.WriteFile(script, []byte(ragScheduleScript), 0o600))
	code, out := runK6(t, script, map[string]string{"SIM_URL": sim, "LLM_RECORD": record})
	require.Equal(t, 0, code, out)
	raw, err := os.ReadFile(record) //nolint:gosec // the test's own temp file
	require.NoError(t, err)
	var rec struct {
		Categories map[string]struct {
			Metrics map[string]struct {
				Count uint64 `json:"count"`
			} `json:"metrics"`
		} `json:"categories"`
		Retrieval []struct {
			Op      string `json:"op"`
			Calls   uint64 `json:"calls"`
			Metrics map[string]struct {
				Count uint64  `json:"count"`
				P99   float64 `json:"p99"`
			} `json:"metrics"`
		} `json:"retrieval"`
	}
	require.NoError(t, json.Unmarshal(raw, &rec))
	byOp := map[string]int{}
	for i, g := range rec.Retrieval {
		byOp[g.Op] = i
	}
	emb, rr := rec.Retrieval[byOp["embed"]], rec.Retrieval[byOp["rerank"]]
	t.Logf("%d embeds, dispatch delay p99 %.1f ms", emb.Calls, emb.Metrics["dispatch_delay"].P99)
	require.Equal(t, emb.Calls, emb.Metrics["dispatch_delay"].Count, "every embed opened an iteration: each has a due time")
	require.Equal(t, emb.Calls, emb.Metrics["e2e_from_due"].Count)
	require.NotContains(t, rr.Metrics, "dispatch_delay", "the rerank after the embed has no due time")
	require.Zero(t, rec.Categories["all"].Metrics["dispatch_delay"].Count, "nor the chat: no stale credit")
}
