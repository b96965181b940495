package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
)

// serverRecord is the part of an llm-sim --trace line the join reads.
type serverRecord struct {
	RequestID    string  `json:"request_id"`
	ConnRequest  int64   `json:"conn_request"`
	ArrivalNS    int64   `json:"arrival_ns"`
	HeadersNS    int64   `json:"headers_ns"`
	FirstTokenNS int64   `json:"first_token_ns"`
	ChunksNS     []int64 `json:"chunks_ns"`
	ChunkTokens  []int   `json:"chunk_tokens"`
	Completion   int     `json:"completion_tokens"`
	Outcome      string  `json:"outcome"`
}

// clientRecord is one answer as a client saw it (ms since its t0), written by
// bench/accuracy.js (through k6's console) or by bench/bareclient.
type clientRecord struct {
	ID    string    `json:"id"`
	OK    bool      `json:"ok"`
	TTFB  *float64  `json:"ttfb"`
	TTFT  *float64  `json:"ttft"`
	Gaps  []float64 `json:"gaps"`
	Error string    `json:"error"`
	// Lag is the module's own measure of how late its process ran during the
	// call (result.clientLag); the bare client has none.
	Lag *float64 `json:"lag"`
	// Late is whether the module made the TTFT late: the first token read
	// together with the next, or the request sent late (result.ttftLate;
	// null when it could not judge).
	Late *bool `json:"late"`
	// Send is the module's send wait, ms (result.sendWait).
	Send *float64 `json:"send"`
}

// errors are one run's per-request errors, client − server, in ms.
type errors struct {
	calls, joined, failed, newConn int
	gapCountMismatch               int
	ttft, read, gap                []float64
	ttftNewConn, ttftReused        []float64
	lag                            []float64 // result.clientLag of every answer that had one
	// answers whose TTFT the module judged (result.ttftLate not null), and
	// those it found late (read or sent); and the TTFT errors of the late ones
	ttftJudged, ttftLateN int
	ttftLate              []float64
	// Checked against the trace: judged answers whose first two output
	// chunks the server wrote within burstMS (sent together), and of those
	// the ones judged late; and answers judged on time whose first token
	// was read (read-side error) half a decode step late or more.
	bursts, burstsLate, missedLate int
	// answers judged on time whose TTFT error (the send side too) was half a
	// decode step or more; and the answers whose send wait was that long
	missedTTFT, sentLate int
	// over is the answers whose TTFT error was half a decode step or more:
	// the truth the client_bound rule's late share stands for
	over int
	// unsent is, per answer with a send wait, its TTFT error less that
	// wait: what the module's own send wait does not account for
	unsent []float64
	// shortest and longest joined answer, tokens: the staggered shape's
	// lengths must differ, or its streams end together like the uniform's
	minTokens, maxTokens int
}

func readLines[T any](path string, keep func(string) bool) ([]T, error) {
	f, err := os.Open(path) // #nosec G304 -- files this program wrote or was given
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Text()
		if !keep(line) {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return nil, fmt.Errorf("%s: %w in %.80q", path, err, line)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// burstMS: a server that wrote its first two output chunks closer than this
// sent them together (its decode step is 20 ms); halfStepMS is half that step,
// the read-side error from which a first token counts as read late.
const (
	burstMS    = 2.0
	halfStepMS = 10.0
)

// join reads the trace and the client's lines and pairs them by request id:
//   - TTFT error: client TTFT − server TTFT (first token written − request
//     arrived), what a user's TTFT overstates;
//   - read-side error: client (TTFT − TTFB) − server (first token − headers
//     written): the request's sending and the connection set-up are out, so
//     this is what reading and timestamping the first event adds;
//   - gap error: each client gap − the server's gap between the same two
//     output-carrying chunks.
//
// Each side's figures are differences of its own stamps, never one side's
// stamp against the other's, so the two processes' clocks need not agree.
// llm-sim's stamps are one wall-clock reading at its start plus monotonic
// time, and the clients' durations are on their monotonic clocks: a
// wall-clock step (NTP) during the run moves neither. llm-sim and the k6
// module date bytes by kernel receive stamps (the request's arrival, each
// event's), which are wall-clock, and move them onto the monotonic clock by
// the wall-clock time they waited in the socket; a step within that wait,
// and only then, lands in an error, which no process reading the kernel's
// stamps can tell from a late packet.
func join(tracePath, clientPath string) (*errors, error) {
	trace, err := readLines[serverRecord](tracePath, func(string) bool { return true })
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*serverRecord, len(trace))
	for i := range trace {
		byID[trace[i].RequestID] = &trace[i]
	}
	calls, err := readLines[clientRecord](clientPath, func(l string) bool { return strings.HasPrefix(l, "{") })
	if err != nil {
		return nil, err
	}
	e := &errors{calls: len(calls)}
	for _, c := range calls {
		e.addClientFacts(c)
		if !c.OK || c.TTFT == nil || c.TTFB == nil {
			e.failed++
			continue
		}
		if s, ok := byID[c.ID]; ok && s.FirstTokenNS != 0 {
			e.addJoined(c, s)
		}
	}
	return e, nil
}

func nsToMS(ns int64) float64 { return float64(ns) / 1e6 }

// addClientFacts counts what the client says of its own call, joined or
// not: the module's lag, a late send, and whether its TTFT was judged late.
func (e *errors) addClientFacts(c clientRecord) {
	if c.Lag != nil {
		e.lag = append(e.lag, *c.Lag)
	}
	if c.Send != nil && *c.Send >= halfStepMS {
		e.sentLate++
	}
	if c.Late != nil {
		e.ttftJudged++
		if *c.Late {
			e.ttftLateN++
		}
	}
}

// addJoined adds an answered call joined with its trace line: its TTFT and
// read-side errors, by connection, and its gap errors.
func (e *errors) addJoined(c clientRecord, s *serverRecord) {
	e.joined++
	if e.joined == 1 || s.Completion < e.minTokens {
		e.minTokens = s.Completion
	}
	e.maxTokens = max(e.maxTokens, s.Completion)
	ttftErr := *c.TTFT - nsToMS(s.FirstTokenNS-s.ArrivalNS)
	e.ttft = append(e.ttft, ttftErr)
	readErr := (*c.TTFT - *c.TTFB) - nsToMS(s.FirstTokenNS-s.HeadersNS)
	out := s.outputChunks()
	if c.Late != nil {
		e.addJudgement(*c.Late, out, ttftErr, readErr)
	}
	if ttftErr >= halfStepMS {
		e.over++
	}
	e.read = append(e.read, readErr)
	if s.ConnRequest == 1 {
		e.newConn++
		e.ttftNewConn = append(e.ttftNewConn, ttftErr)
	} else {
		e.ttftReused = append(e.ttftReused, ttftErr)
	}
	if c.Send != nil {
		e.unsent = append(e.unsent, ttftErr-*c.Send)
	}
	if c.Gaps == nil {
		return // the k6 script asks for the gaps of one call in four
	}
	if len(out) != len(c.Gaps)+1 {
		e.gapCountMismatch++
		return
	}
	for i, g := range c.Gaps {
		e.gap = append(e.gap, g-nsToMS(out[i+1]-out[i]))
	}
}

// addJudgement holds the module's own verdict (late: its first token was
// read late) against the trace: first tokens sent in a burst, and late reads
// or TTFTs the verdict missed.
func (e *errors) addJudgement(late bool, out []int64, ttftErr, readErr float64) {
	if len(out) > 1 && nsToMS(out[1]-out[0]) < burstMS {
		e.bursts++
		if late {
			e.burstsLate++
		}
	}
	if !late && readErr >= halfStepMS {
		e.missedLate++
	}
	if !late && ttftErr >= halfStepMS {
		e.missedTTFT++
	}
	if late {
		e.ttftLate = append(e.ttftLate, ttftErr)
	}
}

// outputChunks are the write times of the chunks that carried output.
func (s *serverRecord) outputChunks() []int64 {
	var out []int64
	for i, n := range s.ChunkTokens {
		if n > 0 && i < len(s.ChunksNS) {
			out = append(out, s.ChunksNS[i])
		}
	}
	return out
}

// dist is p50 / p99 / max of a sample.
type dist struct{ p50, p99, max float64 }

func distOf(v []float64) dist {
	if len(v) == 0 {
		return dist{math.NaN(), math.NaN(), math.NaN()}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return dist{quantile(s, 0.50), quantile(s, 0.99), s[len(s)-1]}
}

// quantile is the nearest-rank p-quantile of sorted values.
func quantile(sorted []float64, p float64) float64 {
	return sorted[max(0, min(len(sorted)-1, int(math.Ceil(p*float64(len(sorted))))-1))]
}

func (d dist) String() string { return fmt.Sprintf("%.2f / %.2f / %.1f", d.p50, d.p99, d.max) }
