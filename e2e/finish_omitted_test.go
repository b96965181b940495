package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A server that names no finish reason (llm-d's inference simulator, as
// llm-sim's omit_finish_reason quirk streams it) must not turn a step load
// red: every answer is complete, the stages and the diagnosis are those of a
// server that names its finish (e2e/scenarios/short_steps.js, the same load
// without the quirk, in diagnosisCases), and the report counts the answers
// without one. With requireFinishReason the same run fails every call as
// truncated, and the report's diagnosis says so first.

// stepRecord is the part of the run record this test reads.
type stepRecord struct {
	runRecord
	Categories map[string]struct {
		Requests      uint64            `json:"requests"`
		Failures      uint64            `json:"failures"`
		Errors        map[string]uint64 `json:"errors"`
		FinishOmitted uint64            `json:"finish_omitted"`
	} `json:"categories"`
	Stages []struct {
		Concurrency     float64 `json:"concurrency"`
		Calls           uint64  `json:"calls"`
		TTFTP50         float64 `json:"ttft_p50"`
		TokensPerSecP50 float64 `json:"tokens_per_sec_p50"`
	} `json:"stages"`
}

func readStepRecord(t *testing.T, dir, out string) stepRecord {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "report.json")) //nolint:gosec // the test's own k6 run wrote it
	require.NoError(t, err, out)
	var rec stepRecord
	require.NoError(t, json.Unmarshal(data, &rec), out)
	require.NoError(t, json.Unmarshal(data, &rec.runRecord), out)
	return rec
}

func TestStepLoadWithoutFinishReason(t *testing.T) {
	if testing.Short() {
		t.Skip("runs k6 for about half a minute")
	}
	t.Parallel()
	const script = "e2e/scenarios/finish_omitted_steps.js"
	lenient, strict := &scriptRun{script: script}, &scriptRun{script: script, env: map[string]string{"STRICT": "1"}}
	runSideBySide(t, []*scriptRun{lenient, strict})

	t.Run("default", func(t *testing.T) {
		require.NoError(t, lenient.res.err)
		require.Equal(t, 0, lenient.res.code, "llm_failed's threshold holds: no call failed\n%s", lenient.res.out)
		rec := readStepRecord(t, lenient.dir, lenient.res.out)
		all := rec.Categories["all"]
		require.NotZero(t, all.Requests)
		require.Zero(t, all.Failures, "%v", all.Errors)
		require.Equal(t, all.Requests, all.FinishOmitted, "every answer ended without a finish reason")

		require.Len(t, rec.Stages, 4, "one stage per step: %+v", rec.Stages)
		for _, st := range rec.Stages {
			require.Positive(t, st.TTFTP50, "TTFT of the stage at %v", st.Concurrency)
			require.Positive(t, st.TokensPerSecP50, "tokens/s of the stage at %v", st.Concurrency)
		}
		ids := rec.ids()
		for _, want := range []string{"knee", "queue_bound", "finish_omitted"} {
			require.Contains(t, ids, want, "findings %v\n%s", ids, lenient.res.out)
		}
		require.NotContains(t, ids, "decode_saturated")
		require.NotContains(t, ids, "all_failed")
		require.Contains(t, lenient.res.out,
			fmt.Sprintf("%d answers ended without a finish reason: the server or a gateway omits it", all.Requests))
	})

	t.Run("requireFinishReason", func(t *testing.T) {
		require.NoError(t, strict.res.err)
		require.Equal(t, 99, strict.res.code, "llm_failed's threshold is crossed\n%s", strict.res.out)
		rec := readStepRecord(t, strict.dir, strict.res.out)
		all := rec.Categories["all"]
		require.NotZero(t, all.Requests)
		require.Equal(t, all.Requests, all.Failures)
		require.Equal(t, map[string]uint64{"truncated": all.Requests}, all.Errors)
		require.Zero(t, all.FinishOmitted, "a failed call is not a complete answer")
		require.Contains(t, rec.ids(), "all_failed")
		require.Contains(t, strict.res.out, "Every call failed")
		require.Contains(t, strict.res.out, "the same way, truncated")
		require.Contains(t, strict.res.out, "stream ended with [DONE] but no finish reason")
		require.NotContains(t, strict.res.out, "nothing stands out")
	})
}

// cacheCall is one CALL line of e2e/scenarios/cache_field.js.
type cacheCall struct {
	OK        bool   `json:"ok"`
	RequestID string `json:"requestId"`
	Cache     string `json:"cache"`
	Usage     *struct {
		PromptTokens int  `json:"promptTokens"`
		CachedTokens *int `json:"cachedTokens"`
	} `json:"usage"`
	FinishSource string `json:"finishSource"`
}

// runCacheScript runs the cache script against llm-sim with the given
// cached-token field and returns each call's line and llm-sim's cached
// count per request id (its trace).
func runCacheScript(t *testing.T, field string) ([]cacheCall, map[string]int) {
	t.Helper()
	trace := filepath.Join(t.TempDir(), "trace.jsonl")
	url := startSim(t, "--model", "sim=small", "--set", "cached_tokens_field="+field, "--seed", "1", "--trace", trace)
	code, out := runK6(t, "e2e/scenarios/cache_field.js", map[string]string{"LLM_BASE_URL": url + "/v1"}, "--log-format", "raw")
	require.Equal(t, 0, code, out)
	var calls []cacheCall
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "CALL "); ok {
			var c cacheCall
			require.NoError(t, json.Unmarshal([]byte(rest), &c), line)
			calls = append(calls, c)
		}
	}
	require.Len(t, calls, 4, out)
	return calls, serverCached(t, trace, len(calls))
}

// serverCached reads llm-sim's trace: the cached prompt tokens of each
// request, by id. The trace is written as requests end, so it is read
// until it holds every call.
func serverCached(t *testing.T, path string, calls int) map[string]int {
	t.Helper()
	got := map[string]int{}
	require.Eventually(t, func() bool {
		f, err := os.Open(path) //nolint:gosec // the test's own llm-sim wrote it
		if err != nil {
			return false
		}
		defer func() { _ = f.Close() }()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var rec struct {
				RequestID    string `json:"request_id"`
				CachedTokens int    `json:"cached_tokens"`
			}
			if json.Unmarshal(sc.Bytes(), &rec) == nil && rec.RequestID != "" {
				got[rec.RequestID] = rec.CachedTokens
			}
		}
		return len(got) >= calls
	}, 5e9, 1e8)
	return got
}

// llm-d's spelling of the cache count (prompt_tokens_detail) is read: the
// calls after the first hit the prefix cache their shared system prompt
// filled, with the server's own count; a server whose usage has no cached
// field at all leaves the cache unknown and the count null.
func TestCacheCountUnderAnotherName(t *testing.T) {
	t.Parallel()
	t.Run("prompt_tokens_detail", func(t *testing.T) {
		t.Parallel()
		calls, server := runCacheScript(t, "prompt_tokens_detail")
		for i, c := range calls {
			require.True(t, c.OK, "call %d", i)
			require.NotNil(t, c.Usage, "call %d", i)
			require.NotNil(t, c.Usage.CachedTokens, "call %d: the server sent a cached count", i)
			want, ok := server[c.RequestID]
			require.True(t, ok, "call %d (%s) is in llm-sim's trace", i, c.RequestID)
			require.Equal(t, want, *c.Usage.CachedTokens, "call %d: the server's count", i)
			if i == 0 {
				require.Equal(t, "miss", c.Cache, "the first call fills the cache")
				continue
			}
			require.Equal(t, "hit", c.Cache, "call %d", i)
			require.Greater(t, *c.Usage.CachedTokens, c.Usage.PromptTokens/2, "call %d: the system prompt is cached", i)
		}
	})
	t.Run("none", func(t *testing.T) {
		t.Parallel()
		calls, server := runCacheScript(t, "none")
		for i, c := range calls {
			require.True(t, c.OK, "call %d", i)
			require.NotNil(t, c.Usage, "call %d: usage came", i)
			require.Equal(t, "unknown", c.Cache, "call %d", i)
			require.Nil(t, c.Usage.CachedTokens, "call %d", i)
			if i > 0 {
				require.Positive(t, server[c.RequestID], "call %d: the server did cache, it only did not say", i)
			}
		}
	})
}
