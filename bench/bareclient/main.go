// Command bareclient is the floor of the loopback and accuracy benchmarks: the
// simplest honest streaming client a Go developer would write. Goroutines loop
// POST → read lines with bufio → json.Unmarshal every "data:" chunk → read the
// body to EOF (so the connection goes back to the pool and trailers arrive),
// and count the output tokens of every complete answer (the usage of its final
// chunk, as the k6 module counts them). By default it measures nothing per
// token: whatever the module does beyond this (timestamps, gaps, metrics,
// JavaScript) is the cost the loopback comparison shows. With -requests-out it
// also timestamps each line as it is read (time.Now after ReadBytes, nothing
// in between) and writes, per answer, its request id, TTFB, TTFT and every
// gap: the floor of the accuracy benchmark (bench/accuracy). With -http 2 it
// speaks HTTP/2 in cleartext (h2c), -conn-streams goroutines to a connection
// as a k6 VU's streams share one: the floor for the module over HTTP/2. With
// -start-spread those groups start spread over a duration, as k6's VUs do
// with make accuracy's START_SPREAD.
//
//	go run ./bench/bareclient -url http://127.0.0.1:8000/v1 -model sim-fast -vus 50 -duration 30s
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// chunk is the part of a chat.completion.chunk this client reads.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// summary is the one JSON line printed at the end, read by scripts/bench.sh.
type summary struct {
	Client       string  `json:"client"`
	VUs          int     `json:"vus"`
	DurationSec  float64 `json:"durationSec"`
	Requests     int64   `json:"requests"` // complete answers
	Failed       int64   `json:"failed"`
	OutputTokens int64   `json:"outputTokens"`
	Events       int64   `json:"events"`
	TokensPerSec float64 `json:"tokensPerSec"`
}

type counters struct {
	requests, failed, tokens, events atomic.Int64
}

// timing is one answer as the accuracy benchmark reads it; the field names
// and units (ms) are those of the k6 module's result.
type timing struct {
	ID    string    `json:"id"`
	OK    bool      `json:"ok"`
	TTFB  float64   `json:"ttfb"`
	TTFT  float64   `json:"ttft"`
	Gaps  []float64 `json:"gaps"`
	Chunk int       `json:"chunks"`
}

func msSince(a, b time.Time) float64 { return float64(b.Sub(a)) / float64(time.Millisecond) }

// options are the command line's.
type options struct {
	url, model, requestsOut, httpVersion    string
	vus, maxTokens, connStreams             int
	duration, startSpread                   time.Duration
	finishOpen, seedPerRequest, tlsInsecure bool
	embed                                   bool // embeddings calls (embed.go), not streamed chat
}

func main() {
	o := parseOptions()
	c, timings, elapsed := o.run()
	if o.requestsOut != "" {
		if err := writeTimings(o.requestsOut, timings); err != nil {
			fmt.Fprintln(os.Stderr, "bareclient:", err)
			os.Exit(1)
		}
	}
	s := summary{
		Client: "bare", VUs: o.vus, DurationSec: elapsed.Seconds(),
		Requests: c.requests.Load(), Failed: c.failed.Load(), OutputTokens: c.tokens.Load(), Events: c.events.Load(),
	}
	s.TokensPerSec = float64(s.OutputTokens) / s.DurationSec
	_ = json.NewEncoder(os.Stdout).Encode(s)
}

// parseOptions reads the command line; a wrong -http or -conn-streams exits 2.
func parseOptions() options {
	var o options
	flag.StringVar(&o.url, "url", "http://127.0.0.1:8000/v1", "base URL of an OpenAI-compatible server")
	flag.StringVar(&o.model, "model", "sim-fast", "model to ask for")
	flag.IntVar(&o.vus, "vus", 50, "concurrent streams (goroutines)")
	flag.DurationVar(&o.duration, "duration", 30*time.Second, "how long to run; answers still open at the end are not counted")
	flag.IntVar(&o.maxTokens, "max-tokens", 1000, "max_tokens of every request")
	flag.StringVar(&o.requestsOut, "requests-out", "", "write one JSON line per answer (request id, ttfb, ttft, gaps in ms) to `FILE`")
	flag.BoolVar(&o.finishOpen, "finish-open", false, "at the end of -duration start no new answer but let the open ones finish (counted); default: cut them")
	flag.BoolVar(&o.seedPerRequest, "seed-per-request", false, "give every request its own seed, so a server that draws answer lengths from the request (llm-sim) varies them; "+
		"default: one body for all requests, and llm-sim gives every answer the same length")
	flag.StringVar(&o.httpVersion, "http", "1.1", "protocol: 1.1, or 2 (HTTP/2 without TLS, h2c)")
	flag.IntVar(&o.connStreams, "conn-streams", 10, "goroutines grouped as a k6 VU's streams: with -http 2 they share one connection, with -start-spread they start together")
	flag.BoolVar(&o.tlsInsecure, "tls-insecure", false, "for an https -url: skip verifying the server's certificate (llm-sim --tls makes a self-signed one); HTTP/1.1 only")
	flag.DurationVar(&o.startSpread, "start-spread", 0, "start the groups of -conn-streams goroutines spread over this long, as make accuracy's START_SPREAD spreads k6's VUs; default: all at once")
	flag.BoolVar(&o.embed, "embed", false, "make embeddings calls (one input, the body read whole and decoded) instead of streamed chat")
	flag.Parse()
	if o.httpVersion != "1.1" && o.httpVersion != "2" {
		fmt.Fprintf(os.Stderr, "bareclient: -http %q: want 1.1 or 2\n", o.httpVersion)
		os.Exit(2)
	}
	if o.connStreams < 1 {
		fmt.Fprintf(os.Stderr, "bareclient: -conn-streams %d: want at least 1\n", o.connStreams)
		os.Exit(2)
	}
	return o
}

// body is the request of every call; with -seed-per-request each carries
// its own seed.
func (o options) body(seed int64) []byte {
	b := map[string]any{
		"model":          o.model,
		"messages":       []map[string]string{{"role": "user", "content": "Write a long story."}},
		"max_tokens":     o.maxTokens,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
	}
	if o.seedPerRequest {
		b["seed"] = seed
	}
	p, err := json.Marshal(b)
	if err != nil {
		panic(err)
	}
	return p
}

// run loops -vus goroutines of calls for -duration, each group of
// -conn-streams started as k6's VU of the same number would be, and returns
// the counts, every answer's timing (with -requests-out) and how long it took.
func (o options) run() (*counters, [][]timing, time.Duration) {
	payload, path := o.body(0), "/chat/completions"
	if o.embed {
		payload, path = o.embedBody(), "/embeddings"
	}
	clients := newClients(o.vus, o.httpVersion, o.connStreams, o.tlsInsecure)
	ctx, cancel := context.WithTimeout(context.Background(), o.duration)
	defer cancel()
	reqCtx := ctx // what cuts the answers open at the end
	if o.finishOpen {
		reqCtx = context.Background()
	}
	var c counters
	var wg sync.WaitGroup
	timings := make([][]timing, o.vus)
	start := time.Now()
	groups := (o.vus + o.connStreams - 1) / o.connStreams
	for i := range o.vus {
		wg.Go(func() {
			// Group g of n starts g/n of -start-spread late, as k6's VU g+1 does.
			time.Sleep(time.Duration(i/o.connStreams) * o.startSpread / time.Duration(groups))
			for n := int64(0); ctx.Err() == nil; n++ {
				p := payload
				if o.seedPerRequest {
					p = o.body(int64(i+1)*1_000_000 + n) // as bench/accuracy.js numbers its calls
				}
				if o.embed {
					embedCall(reqCtx, clients[i], o.url+path, payload, &c)
					continue
				}
				t := stream(reqCtx, clients[i], o.url+path, p, &c, o.requestsOut != "")
				if t != nil {
					timings[i] = append(timings[i], *t)
				}
			}
		})
	}
	wg.Wait()
	return &c, timings, time.Since(start)
}

// newClients gives each goroutine its client. Over HTTP/1.1 they share one
// transport with a kept-alive connection per goroutine (the default of two
// idle connections per host would reconnect the others on every request).
// Over HTTP/2 a transport multiplexes every request on one connection, so
// each group of connStreams goroutines gets its own transport: its own
// connection, as each k6 VU has its own.
func newClients(vus int, httpVersion string, connStreams int, tlsInsecure bool) []*http.Client {
	transport := func() *http.Transport {
		t := &http.Transport{MaxIdleConnsPerHost: vus, DisableCompression: true}
		if tlsInsecure {
			// A loopback llm-sim's own certificate; with a TLS config of its
			// own the transport speaks HTTP/1.1, as the module is told to.
			t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // #nosec G402 -- a benchmark against a self-signed loopback server
		}
		if httpVersion == "2" {
			t.Protocols = new(http.Protocols)
			t.Protocols.SetUnencryptedHTTP2(true)
		}
		return t
	}
	clients := make([]*http.Client, vus)
	var shared *http.Client
	for i := range clients {
		if shared == nil || (httpVersion == "2" && i%connStreams == 0) {
			shared = &http.Client{Transport: transport()}
		}
		clients[i] = shared
	}
	return clients
}

// stream makes one request, reads its answer to [DONE] and the body to EOF.
// With timed, it returns the answer's timing (nil if it failed).
func stream(ctx context.Context, client *http.Client, url string, payload []byte, c *counters, timed bool) *timing {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		countFailure(ctx, c)
		return nil
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		countFailure(ctx, c)
		return nil
	}
	var t *timing
	var last time.Time
	if timed {
		t = &timing{ID: resp.Header.Get("X-Request-Id"), TTFB: msSince(t0, time.Now()), TTFT: -1}
	}
	br := bufio.NewReader(resp.Body)
	var (
		tokens int64
		events int64
		text   []byte // kept like a real client keeps the answer
	)
	for {
		line, err := br.ReadBytes('\n')
		var at time.Time
		if timed {
			at = time.Now()
		}
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			data = bytes.TrimSpace(data)
			if string(data) == "[DONE]" {
				return answered(ctx, br, c, t, tokens, events)
			}
			var ch chunk
			if json.Unmarshal(data, &ch) == nil {
				events++
				n := len(text)
				for _, choice := range ch.Choices {
					text = append(text, choice.Delta.Content...)
				}
				if ch.Usage != nil {
					tokens = ch.Usage.CompletionTokens
				}
				if t != nil && len(text) > n { // an event carrying output
					t.Chunk++
					if t.TTFT < 0 {
						t.TTFT = msSince(t0, at)
					} else {
						t.Gaps = append(t.Gaps, msSince(last, at))
					}
					last = at
				}
			}
		}
		if err != nil {
			countFailure(ctx, c)
			return nil
		}
	}
}

// writeTimings writes every answer's timing as one JSON line.
func writeTimings(path string, perVU [][]timing) error {
	f, err := os.Create(path) // #nosec G304 -- the operator's path
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, ts := range perVU {
		for i := range ts {
			if err := enc.Encode(&ts[i]); err != nil {
				return err
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// countFailure counts a failed answer, except the ones cut by the end of the
// run, which k6 does not count either.
// answered ends an answer at its [DONE]: the rest of the body read (Go's
// transport pools a connection only once its body was read to the end),
// then the answer counted (nil when the read failed).
func answered(ctx context.Context, br *bufio.Reader, c *counters, t *timing, tokens, events int64) *timing {
	if _, err := io.Copy(io.Discard, br); err != nil {
		countFailure(ctx, c)
		return nil
	}
	c.requests.Add(1)
	c.tokens.Add(tokens)
	c.events.Add(events)
	if t != nil {
		t.OK = true
	}
	return t
}

func countFailure(ctx context.Context, c *counters) {
	if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		c.failed.Add(1)
	}
}

func init() {
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "bareclient: the reference Go streaming client of the loopback benchmark")
		flag.PrintDefaults()
	}
}
