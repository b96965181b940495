package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// protocolsScript has one Client per wire format, each pointed at llm-sim's
// native route for it, and checks what k6 measured against what the
// simulator was asked to do: every call complete, exactly MAX output tokens
// counted from the source docs/protocols.md's table names, the
// provider's own word for "max tokens reached", TTFT within the call.
// Thresholds per protocol tag make a failure in any one fail the run, and
// request counts prove every protocol ran.
const protocolsScript = `
import { Client } from 'k6/x/llmstream';
import { check } from 'k6';

const SIM = __ENV.SIM_URL;
const MAX = 12;
const FAULT_AT = 3; // error@3: the simulator fails the stream after 3 tokens
const ITERATIONS = 4;
const prompt = 'Why is the sky blue, and why are sunsets red?';
const messages = [{ role: 'user', content: prompt }];

function client(name, protocol, baseURL) {
  return new Client({ name, protocol, baseURL, model: 'sim' });
}

// name: [client, body (null: a GET stream), params, tokenSource, finishReason]
const cases = {
  'openai-chat': [client('openai-chat', 'openai-chat', SIM + '/v1'), { messages, max_tokens: MAX }, {}, 'usage', 'length'],
  'openai-completions': [client('openai-completions', 'openai-completions', SIM + '/v1'), { prompt, max_tokens: MAX }, {}, 'usage', 'length'],
  'openai-responses': [client('openai-responses', 'openai-responses', SIM + '/v1'), { input: prompt, max_output_tokens: MAX }, {}, 'usage', 'max_output_tokens'],
  'anthropic': [client('anthropic', 'anthropic', SIM + '/v1'), { messages, max_tokens: MAX }, {}, 'usage_stream', 'max_tokens'],
  'ollama-chat': [client('ollama-chat', 'ollama', SIM), { messages, options: { num_predict: MAX } }, {}, 'usage', 'length'],
  'ollama-generate': [client('ollama-generate', 'ollama', SIM), { prompt, options: { num_predict: MAX } }, {}, 'usage', 'length'],
  'gemini': [client('gemini', 'gemini', SIM + '/v1beta'), { contents: [{ role: 'user', parts: [{ text: prompt }] }], generationConfig: { maxOutputTokens: MAX } }, {}, 'usage_stream', 'MAX_TOKENS'],
  'tgi': [client('tgi', 'tgi', SIM), { inputs: prompt, parameters: { max_new_tokens: MAX } }, {}, 'usage', 'length'],
  'llamacpp': [client('llamacpp', 'llamacpp', SIM), { prompt, n_predict: MAX }, {}, 'usage_stream', 'limit'],
  'sse': [client('sse', 'sse', SIM), null, { path: '/v1/sim/events?max_tokens=' + MAX + '&prompt=' + encodeURIComponent(prompt) }, 'tokenizer', ''],
};

const protocols = ['openai-chat', 'openai-completions', 'openai-responses', 'anthropic', 'ollama', 'gemini', 'tgi', 'llamacpp', 'sse'];
const thresholds = {};
for (const p of protocols) {
  const calls = p === 'ollama' ? 2 * ITERATIONS : ITERATIONS;
  const ok = '{protocol:' + p + ',fault:none}';
  const faulted = '{protocol:' + p + ',fault:error}';
  thresholds['llm_failed' + ok] = ['rate==0'];
  thresholds['llm_requests' + ok] = ['count==' + calls];
  thresholds['llm_output_tokens' + ok] = ['count==' + calls * MAX];
  thresholds['llm_ttft' + ok] = ['max<10000'];
  thresholds['llm_failed' + faulted] = ['rate==1'];
  thresholds['llm_output_tokens' + faulted] = ['count==' + calls * FAULT_AT];
}
for (const name of Object.keys(cases)) {
  thresholds['checks{case:' + name + '}'] = ['rate==1'];
}

export const options = { vus: 2, iterations: ITERATIONS, thresholds };

export default async function () {
  await Promise.all(Object.entries(cases).map(async ([name, [c, body, params, tokenSource, finish]]) => {
    const r = await c.chat(body, Object.assign({ tags: { fault: 'none' } }, params));
    check(r, {
      ok: (r) => r.ok,
      ['outputTokens == ' + MAX]: (r) => r.outputTokens === MAX,
      ['tokenSource ' + tokenSource]: (r) => r.tokenSource === tokenSource,
      ['finishReason ' + finish]: (r) => r.finishReason === finish,
      'ttft <= e2e': (r) => r.ttft !== null && r.ttft > 0 && r.ttft <= r.e2e,
      'text': (r) => r.text.trim().split(/\s+/).length === MAX,
      'usage': (r) => body === null ? r.usage === null : r.usage.completionTokens === MAX,
    }, { case: name });
    if (!r.ok) console.error(name + ': ' + JSON.stringify(r.error));

    // The same call with an error after FAULT_AT tokens, in the protocol's own
    // in-stream error shape: a stream_error carrying the server's message,
    // with the tokens that came before it counted.
    const f = await c.chat(body, Object.assign({}, params, {
      headers: { 'X-Sim-Fault': 'error@' + FAULT_AT }, tags: { fault: 'error' },
    }));
    check(f, {
      'fault: failed as stream_error': (f) => !f.ok && f.error.type === 'stream_error',
      'fault: server message kept': (f) => f.error.message.includes('llm-sim fault: error after ' + FAULT_AT + ' tokens'),
      ['fault: outputTokens == ' + FAULT_AT]: (f) => f.outputTokens === FAULT_AT,
    }, { case: name });
  }));
}
`

// TestEveryProtocolAgainstLLMSim runs one k6 run with a Client per protocol
// against llm-sim's native routes.
func TestEveryProtocolAgainstLLMSim(t *testing.T) {
	t.Parallel()
	url := startSim(t, "--model", "sim=demo", "--seed", "1")
	script := filepath.Join(t.TempDir(), "protocols.js")
	require.NoError(t, os.WriteFile(script, []byte(protocolsScript), 0o600))
	code, out := runK6(t, script, map[string]string{"SIM_URL": url})
	require.Equal(t, 0, code, out)
	for _, p := range []string{"anthropic", "gemini", "tgi", "llamacpp", "sse", "ollama", "openai-responses"} {
		require.True(t, strings.Contains(out, "llm_failed{protocol:"+p+",fault:none}"), "threshold for %s in the summary:\n%s", p, out)
	}
}
