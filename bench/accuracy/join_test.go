package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestJoin(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "trace.jsonl")
	client := filepath.Join(dir, "client.jsonl")
	// Arrival at 1 000 000 ns, headers at +1 ms, role chunk at +10 ms, tokens
	// at +11, +21 and +41 ms; the second request reused the connection.
	const line = `{"request_id":"a","conn_request":1,"arrival_ns":1000000,"headers_ns":2000000,"first_token_ns":12000000,` +
		`"chunks_ns":[11000000,12000000,22000000,42000000,43000000],"chunk_tokens":[0,1,1,1,0],"completion_tokens":3}`
	if err := os.WriteFile(trace, []byte(line+"\n"+`{"request_id":"b","conn_request":2,"arrival_ns":0,"headers_ns":1000000,"first_token_ns":5000000,"chunks_ns":[5000000,6000000],"chunk_tokens":[1,1],"completion_tokens":2}`+"\n"+
		`{"request_id":"e","conn_request":3,"arrival_ns":0,"headers_ns":1000000,"first_token_ns":5000000,"chunks_ns":[5000000,6000000],"chunk_tokens":[1,1],"completion_tokens":2}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// a: TTFT 12.5 ms (server 11 ms), TTFB 1.5 ms, gaps 10.5 and 19.5 (server
	// 10 and 20). b: its gap count differs from the server's. c: not in the
	// trace. d: failed. e: did not ask for its gaps (null), which is no
	// mismatch. A line that is not JSON (k6's own log) is skipped.
	lines := `{"id":"a","ok":true,"ttfb":1.5,"ttft":12.5,"gaps":[10.5,19.5],"late":true,"send":12}
{"id":"b","ok":true,"ttfb":1.2,"ttft":5.2,"gaps":[1,1],"late":false,"send":0.1}
{"id":"c","ok":true,"ttfb":1,"ttft":2,"gaps":[]}
{"id":"d","ok":false,"ttfb":null,"ttft":null,"gaps":[],"error":"network"}
{"id":"e","ok":true,"ttfb":1.2,"ttft":5.2,"gaps":null}
level=info msg=done
`
	if err := os.WriteFile(client, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := join(trace, client)
	if err != nil {
		t.Fatal(err)
	}
	if e.calls != 5 || e.joined != 3 || e.failed != 1 || e.newConn != 1 || e.gapCountMismatch != 1 {
		t.Fatalf("calls %d joined %d failed %d newConn %d mismatch %d", e.calls, e.joined, e.failed, e.newConn, e.gapCountMismatch)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if d := got - want; d > 1e-9 || d < -1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	near("TTFT error a", e.ttft[0], 1.5)    // 12.5 − (12 − 1)
	near("read-side error a", e.read[0], 1) // (12.5 − 1.5) − (12 − 2)
	near("TTFT error b", e.ttft[1], 0.2)    // 5.2 − 5
	near("gap error 1", e.gap[0], 0.5)      // 10.5 − 10
	near("gap error 2", e.gap[1], -0.5)     // 19.5 − 20
	near("TTFT error on a new connection", e.ttftNewConn[0], 1.5)
	if len(e.gap) != 2 {
		t.Errorf("%d gap errors, want 2 (b's do not pair)", len(e.gap))
	}
	// a's first token was read late, b's not; the others were not judged.
	// One late call is under the rule's minimum of three.
	if e.ttftJudged != 2 || e.ttftLateN != 1 || len(e.ttftLate) != 1 || clientBound(e) {
		t.Errorf("judged %d, late %d (%v): client_bound %v, want 2, 1, false", e.ttftJudged, e.ttftLateN, e.ttftLate, clientBound(e))
	}
	// b's server wrote its two tokens 1 ms apart (together), and b was not
	// taken for late; a was read 1 ms late, judged late.
	if e.bursts != 1 || e.burstsLate != 0 || e.missedLate != 0 || e.missedTTFT != 0 || e.sentLate != 1 {
		t.Errorf("server bursts %d, judged late %d; missed %d, %d; sent late %d, want 1, 0, 0, 0, 1",
			e.bursts, e.burstsLate, e.missedLate, e.missedTTFT, e.sentLate)
	}
	// a (a new connection) and b (a reused one) have send waits: a's TTFT
	// error 1.5 less 12, b's 0.2 less 0.1
	if len(e.unsent) != 2 {
		t.Errorf("%d answers with the send wait taken off, want 2 (a, b)", len(e.unsent))
	} else {
		near("a's TTFT error less its send wait", e.unsent[0], -10.5)
		near("b's TTFT error less its send wait", e.unsent[1], 0.1)
	}
	// no answer's TTFT was half a decode step (10 ms) over the server's
	if e.over != 0 || clientBoundDue(e) {
		t.Errorf("%d answers 10 ms over, client_bound due %v; want 0, false", e.over, clientBoundDue(e))
	}
	e.ttftJudged, e.ttftLateN = 100, 3
	if !clientBound(e) {
		t.Error("3 late first reads in 100 must make client_bound fire")
	}
	e.joined, e.over = 100, 3
	if !clientBoundDue(e) {
		t.Error("3 answers in 100 half a decode step over must call for client_bound")
	}
	e.joined = 301
	if clientBoundDue(e) {
		t.Error("3 answers in 301 are under one in a hundred")
	}
	if e.minTokens != 2 || e.maxTokens != 3 {
		t.Errorf("answer lengths %d–%d tokens, want 2–3", e.minTokens, e.maxTokens)
	}
	d := distOf([]float64{5, 1, 3, 2, 4})
	near("p50", d.p50, 3)
	near("max", d.max, 5)
}

// -rejoin reads back what a run kept beside its files.
func TestRejoinReadsTheRunsFacts(t *testing.T) {
	dir := t.TempDir()
	s := settings{out: dir, runs: 1}
	name := "uniform-k6-50"
	if err := os.WriteFile(filepath.Join(dir, name+"-trace.jsonl"), []byte(`{"request_id":"a","conn_request":2,"arrival_ns":0,"headers_ns":1000000,"first_token_ns":5000000,"chunks_ns":[5000000],"chunk_tokens":[1]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+"-client.jsonl"), []byte(`{"id":"a","ok":true,"ttfb":1.2,"ttft":5.5,"gaps":null}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.saveRun(name, result{clientCPU: 1.5, simCPU: 1.1, connections: 50}); err != nil {
		t.Fatal(err)
	}
	r, err := s.joinAgain("uniform", "k6", 50, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.clientCPU != 1.5 || r.simCPU != 1.1 || r.connections != 50 || r.e.joined != 1 || len(r.e.ttftReused) != 1 {
		t.Fatalf("rejoined %+v, errors %+v", r, r.e)
	}
}

// With several runs, each run has its own files and the ratios are the
// median of the runs, with their range.
func TestSeveralRunsGiveMediansAndRanges(t *testing.T) {
	s := settings{runs: 3, clients: []string{"k6", "bare"}}
	if a, b := s.name("uniform", "k6", 50, 1), s.name("uniform", "k6", 50, 2); a == b {
		t.Fatalf("two runs share the file prefix %q", a)
	}
	level := func(ttft float64) *errors {
		return &errors{joined: 200, ttft: []float64{ttft}, gap: []float64{1}, ttftReused: []float64{ttft}, lag: []float64{1}}
	}
	runs := map[int]map[string]result{}
	for k, ttft := range map[int]float64{1: 1, 2: 3, 3: 2} { // the floor's TTFT error is 1 in every run
		runs[k] = map[string]result{"k6": {e: level(ttft)}, "bare": {e: level(1)}}
	}
	runs[2]["k6"].e.over = 3 // 1.5 % of 200, and at least three: due in that run
	got := ratioLine(s, runs, "k6")
	const want = "2.00 (1.00–3.00)  2.00 (1.00–3.00)  1.00 (1.00–1.00)  2.00 (1.00–3.00)   client_bound fires in 0 of 3 runs (due in 1)"
	if got != want {
		t.Errorf("ratio line\n got %q\nwant %q", got, want)
	}
	if m := median([]float64{1, 2}); m != 1.5 {
		t.Errorf("median of 1 and 2 = %v, want 1.5", m)
	}
}

// Every staggered run until this check had one answer length: llm-sim draws
// it from the prompt and the seed, and the clients sent neither varied. The
// tables then called waves of streams ending together "staggered".
func TestStaggeredAnswersOfOneLengthAreAProblem(t *testing.T) {
	var s settings
	r := result{shape: "staggered", streams: 50, e: &errors{calls: 100, joined: 100, ttft: []float64{1}, minTokens: 155, maxTokens: 155}}
	if p := s.problems(r); len(p) != 1 || !strings.Contains(p[0], "every answer was 155 tokens") {
		t.Errorf("problems %q, want one naming the single length", p)
	}
	r.e.maxTokens = 199
	if p := s.problems(r); len(p) != 0 {
		t.Errorf("lengths 155–199: problems %q, want none", p)
	}
	r.shape, r.e.maxTokens = "uniform", 155
	if p := s.problems(r); len(p) != 0 {
		t.Errorf("uniform answers of one length: problems %q, want none", p)
	}
}
