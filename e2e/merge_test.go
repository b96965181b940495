package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// A test split across k6 instances and merged with `llmstream merge` must
// count exactly what one instance counts (the executors fix the number of
// calls), and its quantiles must be within the sketch's 1 % of the exact
// quantiles of every call the instances made (read from k6's own JSON output).

// llmstreamBin is the merge command, built with the other binaries.
func llmstreamBin(t *testing.T) string {
	t.Helper()
	binaries(t)
	return filepath.Join(binDir, "llmstream")
}

// mergeRecord is the part of a run record the test reads.
type mergeRecord struct {
	Categories map[string]struct {
		Requests uint64 `json:"requests"`
		Failures uint64 `json:"failures"`
		Metrics  map[string]struct {
			Count uint64  `json:"count"`
			P50   float64 `json:"p50"`
			P95   float64 `json:"p95"`
			P99   float64 `json:"p99"`
		} `json:"metrics"`
	} `json:"categories"`
	Run *struct {
		Segment     string `json:"segment"`
		Fingerprint *struct {
			Digest string            `json:"digest"`
			Files  map[string]string `json:"files"`
		} `json:"fingerprint"`
	} `json:"run"`
	Retrieval []struct {
		Op      string `json:"op"`
		Calls   uint64 `json:"calls"`
		Failed  uint64 `json:"failed"`
		Metrics map[string]struct {
			Count uint64 `json:"count"`
		} `json:"metrics"`
	} `json:"retrieval"`
	Instances []struct {
		Segment  string `json:"segment"`
		Requests uint64 `json:"requests"`
	} `json:"instances"`
}

func readMergeRecord(t *testing.T, path string) mergeRecord {
	t.Helper()
	raw, err := os.ReadFile(path) //nolint:gosec // the test's own temp file
	require.NoError(t, err)
	var r mergeRecord
	require.NoError(t, json.Unmarshal(raw, &r), path)
	return r
}

// ttftPoints reads every llm_ttft value from k6's --out json file.
func ttftPoints(t *testing.T, path string) []float64 {
	t.Helper()
	f, err := os.Open(path) //nolint:gosec // the test's own temp file
	require.NoError(t, err)
	defer f.Close() //nolint:errcheck // read only
	var out []float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var p struct {
			Type   string `json:"type"`
			Metric string `json:"metric"`
			Data   struct {
				Value float64 `json:"value"`
			} `json:"data"`
		}
		if json.Unmarshal(sc.Bytes(), &p) == nil && p.Type == "Point" && p.Metric == "llm_ttft" {
			out = append(out, p.Data.Value)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// runMergeInstances runs script (e2e/testdata/merge.js) once per segment,
// all at once, and returns each instance's run record and k6 JSON output.
func runMergeInstances(t *testing.T, script, url, sequence string, segments []string) (records, points []string) {
	t.Helper()
	dir := t.TempDir()
	records, points = make([]string, len(segments)), make([]string, len(segments))
	var wg sync.WaitGroup
	for i, seg := range segments {
		records[i] = filepath.Join(dir, fmt.Sprintf("record-%d.json", i))
		points[i] = filepath.Join(dir, fmt.Sprintf("points-%d.json", i))
		wg.Go(func() {
			extra := []string{"--out", "json=" + points[i]}
			if seg != "" {
				extra = append(extra, "--execution-segment", seg, "--execution-segment-sequence", sequence)
			}
			code, out := runK6(t, script, map[string]string{"LLM_BASE_URL": url + "/v1", "LLM_RECORD": records[i]}, extra...)
			if code != 0 {
				t.Errorf("segment %q: k6 exited with %d\n%s", seg, code, out)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return records, points
}

// mergeScript is the test the instances run.
const mergeScript = "e2e/testdata/merge.js"

// checkOtherTestRefused runs the other half of another test, one whose
// scenarios, data set and client are merge.js's but whose calls ask for
// another max_tokens, and checks that its record is not merged with first's.
func checkOtherTestRefused(t *testing.T, bin, url, sequence, first string) {
	t.Helper()
	text, err := os.ReadFile(filepath.Join(repoRoot(t), mergeScript))
	require.NoError(t, err)
	other := strings.Replace(string(text), "max_tokens: 8 }, { item }", "max_tokens: 16 }, { item }", 1)
	require.NotEqual(t, string(text), other)
	script := filepath.Join(t.TempDir(), "merge.js")
	require.NoError(t, os.WriteFile(script, []byte(other), 0o600))
	recs, _ := runMergeInstances(t, script, url, sequence, []string{"1/2:1"})
	out, err := exec.Command(bin, "merge", first, recs[0]).CombinedOutput() //nolint:gosec // our binary, our files
	require.Error(t, err, string(out))
	require.Contains(t, string(out), "are not records of the same test: file merge.js differs", string(out))
}

func retrievalCalls(r mergeRecord) uint64 {
	var n uint64
	for _, g := range r.Retrieval {
		n += g.Calls
	}
	return n
}

func exactQ(sorted []float64, q float64) float64 { return sorted[int(q*float64(len(sorted)-1))] }

func TestMergedInstancesCountLikeOneInstance(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds k6")
	}
	bin := llmstreamBin(t)
	url := startSim(t, "--model", "sim-fast=fast", "--seed", "1")
	singleRec, _ := runMergeInstances(t, mergeScript, url, "", []string{""})
	single := readMergeRecord(t, singleRec[0])
	require.EqualValues(t, 150, single.Categories["all"].Requests, "120 shared iterations + 6 VUs × 5")
	require.EqualValues(t, 30, retrievalCalls(single), "one embed per hello: 6 VUs × 5")

	for _, c := range []struct {
		sequence string
		segments []string
	}{
		{"0,1/2,1", []string{"0:1/2", "1/2:1"}},
		{"0,1/3,2/3,1", []string{"0:1/3", "1/3:2/3", "2/3:1"}},
	} {
		t.Run(fmt.Sprintf("%d instances", len(c.segments)), func(t *testing.T) {
			records, points := runMergeInstances(t, mergeScript, url, c.sequence, c.segments)
			merged := filepath.Join(t.TempDir(), "merged.json")
			html := filepath.Join(t.TempDir(), "merged.html")
			args := append([]string{"merge", "-o", merged, "--html", html, "--text"}, records...)
			out, err := exec.Command(bin, args...).CombinedOutput() //nolint:gosec // our binary, our files
			require.NoError(t, err, string(out))
			require.Contains(t, string(out), fmt.Sprintf("merged from %d instances", len(c.segments)))
			require.NotContains(t, string(out), "warning", "every instance's record has its test's fingerprint")
			m := readMergeRecord(t, merged)
			require.NotNil(t, m.Run)
			require.Empty(t, m.Run.Segment, "the merge covers the whole test")
			require.NotNil(t, m.Run.Fingerprint, "the instances' fingerprints agree, and the whole test keeps it")
			require.Contains(t, m.Run.Fingerprint.Files, "merge.js", "the script, by its path beside itself")
			if len(c.segments) == 2 {
				checkOtherTestRefused(t, bin, url, c.sequence, records[0])
			}
			require.Len(t, m.Instances, len(c.segments))

			// Exact counts: every category, as one instance counted them.
			require.Equal(t, slices.Sorted(maps.Keys(single.Categories)), slices.Sorted(maps.Keys(m.Categories)))
			for cat, want := range single.Categories {
				got := m.Categories[cat]
				require.Equal(t, want.Requests, got.Requests, "%s requests", cat)
				require.Equal(t, want.Failures, got.Failures, "%s failures", cat)
				t.Logf("%s: %d calls merged, %d in one instance", cat, got.Requests, want.Requests)
			}
			// The embed section too: its calls summed, each answered call's duration in the merged sketch.
			require.Equal(t, retrievalCalls(single), retrievalCalls(m), "embed calls")
			var answered, durations uint64
			for _, g := range m.Retrieval {
				answered += g.Calls - g.Failed
				durations += g.Metrics["duration"].Count
			}
			require.Equal(t, answered, durations, "one duration per answered embed call")
			require.Contains(t, string(out), "Embeddings and rerank")
			t.Logf("embed: %d calls in %d load groups merged, %d groups in one instance", retrievalCalls(m), len(m.Retrieval), len(single.Retrieval))
			// Quantiles within the sketch's relative accuracy of the exact
			// quantiles of every TTFT the instances measured.
			var ttfts []float64
			for _, p := range points {
				ttfts = append(ttfts, ttftPoints(t, p)...)
			}
			slices.Sort(ttfts)
			mt := m.Categories["all"].Metrics["ttft"]
			require.EqualValues(t, len(ttfts), mt.Count, "one TTFT per call in the record and in k6's output")
			for _, q := range []struct {
				name string
				q    float64
				got  float64
			}{{"p50", 0.5, mt.P50}, {"p95", 0.95, mt.P95}, {"p99", 0.99, mt.P99}} {
				want := exactQ(ttfts, q.q)
				rel := math.Abs(q.got-want) / want
				t.Logf("TTFT %s: merged %.3f ms, exact %.3f ms (rel err %.4f)", q.name, q.got, want, rel)
				// 1 % sketch accuracy, plus k6's JSON output rounding of the value.
				require.LessOrEqual(t, rel, 0.01+1e-6, "TTFT %s", q.name)
			}
			doc, err := os.ReadFile(html) //nolint:gosec // the test's own temp file
			require.NoError(t, err)
			require.True(t, strings.Contains(string(doc), `id="instances"`))
		})
	}

	// The same record twice is refused: the merge would count its calls twice.
	out, err := exec.Command(bin, "merge", singleRec[0], singleRec[0]).CombinedOutput() //nolint:gosec // our binary, our files
	require.Error(t, err)
	require.Contains(t, string(out), "overlaps")
}
