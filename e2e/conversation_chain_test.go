package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// chainScript: each of two VUs has a 3-turn Responses conversation on a
// chained history (previous_response_id); every turn must be answered.
const chainScript = `
import { Client } from 'k6/x/llmstream';
import { check } from 'k6';

const client = new Client({ protocol: 'openai-responses', baseURL: __ENV.SIM_URL + '/v1', model: 'sim' });
export const options = { vus: 2, iterations: 2, thresholds: { checks: ['rate==1'] } };

export default async function () {
  const conv = client.conversation({ body: { max_output_tokens: 8 }, history: { chain: true },
    session: { header: 'X-Session-Affinity' } });
  for (const q of ['one', 'two', 'three']) {
    const r = await conv.say(q);
    check(r, { 'chained turn answered': (x) => x !== null && x.ok });
  }
  conv.end();
}
`

// TestResponsesChainAgainstLLMSim: through the k6 binary and llm-sim's own
// binary, turns 2 and 3 of each conversation name the previous turn's
// response id and send only their own input, and llm-sim answers them (an
// id it did not keep would be a 400, failing the checks).
func TestResponsesChainAgainstLLMSim(t *testing.T) {
	tracePath := filepath.Join(t.TempDir(), "trace.jsonl")
	url := startSim(t, "--model", "sim=fast", "--seed", "1", "--trace", tracePath, "--trace-bodies")
	script := filepath.Join(t.TempDir(), "chain.js")
	require.NoError(t, os.WriteFile(script, []byte(chainScript), 0o600))
	code, out := runK6(t, script, map[string]string{"SIM_URL": url})
	require.Equal(t, 0, code, out)

	data, err := os.ReadFile(tracePath) //nolint:gosec // the test's own file
	require.NoError(t, err)
	type traced struct {
		RequestID string            `json:"request_id"`
		Status    int               `json:"status"`
		ArrivalNS int64             `json:"arrival_ns"`
		Body      map[string]any    `json:"body"`
		Headers   map[string]string `json:"headers"`
	}
	bySession := map[string][]traced{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var tr traced
		require.NoError(t, json.Unmarshal([]byte(line), &tr))
		s := tr.Headers["X-Session-Affinity"]
		bySession[s] = append(bySession[s], tr)
	}
	require.Len(t, bySession, 2)
	for s, reqs := range bySession {
		require.Len(t, reqs, 3, s)
		sort.Slice(reqs, func(i, j int) bool { return reqs[i].ArrivalNS < reqs[j].ArrivalNS })
		require.NotContains(t, reqs[0].Body, "previous_response_id")
		for i := 1; i < 3; i++ {
			require.Equal(t, 200, reqs[i].Status)
			require.Equal(t, "resp_"+reqs[i-1].RequestID, reqs[i].Body["previous_response_id"], "turn %d names turn %d's answer", i+1, i)
			require.Len(t, reqs[i].Body["input"], 1, "turn %d sends only its own input", i+1)
		}
	}
}
