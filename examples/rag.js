// A retrieval-augmented request, as a RAG app makes it, in one script (docs/guide.md):
// embed the question, search the corpus, rerank the best matches, then stream the answer
// with them as context. Each step is its own call with its own figures and thresholds;
// the corpus is embedded once, in setup(), in one batch.
//   ./k6 run -e LLM_BASE_URL=http://127.0.0.1:8000/v1 examples/rag.js
import { check } from 'k6';
import { Client, Dataset } from 'k6/x/llmstream';

const client = new Client({
  baseURL: __ENV.LLM_BASE_URL || 'http://127.0.0.1:8000/v1',
  model: __ENV.LLM_MODEL || 'sim-large',
  name: 'rag',
  timeouts: { connect: '3s', firstToken: '10s', idle: '30s', total: '1m' },
  retry: { attempts: 2, on: ['http_429', 'http_5xx', 'network'], backoff: { base: '50ms' } },
});

// The corpus: 64 chunks of exactly 96 tokens, drawn as one batch; the questions: 16
// queries of 12 tokens (the rerank set's documents are not used: the search picks them).
const corpus = Dataset.chunks({ seed: 5, tokens: 96, count: 64, batch: { '64': 1 } });
const questions = Dataset.rerank({ seed: 5, queries: 16, documents: 1, queryTokens: 12 });

export const options = {
  vus: 4,
  duration: __ENV.DURATION || '10s',
  thresholds: {
    'llm_embed_duration{op:embed}': ['p(95)<2000'],
    'llm_embed_duration{op:rerank}': ['p(95)<2000'],
    llm_ttft: ['p(95)<3000'],
    llm_failed: ['rate<0.01'],
  },
};

export async function setup() {
  const batch = corpus.next();
  const r = await client.embed({ input: batch.inputs, dimensions: 64, keepVectors: true }, { tags: { category: 'index' } });
  if (!r.ok) throw new Error(`indexing the corpus failed: ${r.error.message}`);
  return { texts: batch.inputs, vectors: r.vectors };
}

function cosine(a, b) {
  let dot = 0, na = 0, nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

export default async function (index) {
  const question = questions.next().query;

  // 1. Embed the question (a batch of one, as an app does per request).
  const q = await client.embed({ input: question, dimensions: 64, keepVectors: true }, { tags: { category: 'query' } });
  if (!check(q, { 'question embedded': (r) => r.ok }) || !q.vectors) return;
  const qv = q.vectors[0];

  // 2. Search: the 8 nearest chunks (in JavaScript; a vector store would do it).
  const nearest = index.vectors
    .map((v, i) => ({ i, score: cosine(qv, v) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, 8)
    .map((x) => index.texts[x.i]);

  // 3. Rerank them and keep the best 3.
  const ranked = await client.rerank({ query: question, documents: nearest, topN: 3 }, { tags: { category: 'rerank' } });
  const best = ranked.results || [];
  if (!check(ranked, { 'reranked, best first': () => best.length === 3 })) return;
  const context = best.map((x) => nearest[x.index]).join('\n\n');

  // 4. Stream the answer with that context.
  const a = await client.chat({
    messages: [
      { role: 'system', content: `Answer from this context:\n${context}` },
      { role: 'user', content: question },
    ],
    max_tokens: 48,
  }, { tags: { category: 'answer' } });
  check(a, { 'answered': (r) => r.ok });
}
