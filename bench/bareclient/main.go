// Command bareclient is the reference for the loopback benchmark: the simplest
// honest streaming client a Go developer would write. Goroutines loop POST →
// read lines with bufio → json.Unmarshal every "data:" chunk, and count the
// output tokens of every complete answer (the usage of its final chunk, as the
// k6 module counts them). It measures nothing per token: whatever the module
// does beyond this (timestamps, gaps, metrics, JavaScript) is the cost the
// comparison shows.
//
//	go run ./bench/bareclient -url http://127.0.0.1:8000/v1 -model sim-fast -vus 50 -duration 30s
package main

import (
	"bufio"
	"bytes"
	"context"
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

func main() {
	url := flag.String("url", "http://127.0.0.1:8000/v1", "base URL of an OpenAI-compatible server")
	model := flag.String("model", "sim-fast", "model to ask for")
	vus := flag.Int("vus", 50, "concurrent streams (goroutines)")
	duration := flag.Duration("duration", 30*time.Second, "how long to run; answers still open at the end are not counted")
	maxTokens := flag.Int("max-tokens", 1000, "max_tokens of every request")
	flag.Parse()

	payload, err := json.Marshal(map[string]any{
		"model":          *model,
		"messages":       []map[string]string{{"role": "user", "content": "Write a long story."}},
		"max_tokens":     *maxTokens,
		"stream":         true,
		"stream_options": map[string]any{"include_usage": true},
	})
	if err != nil {
		panic(err)
	}
	// One kept-alive connection per goroutine, as k6 keeps one per VU; the
	// default of two idle connections per host would reconnect the other 48
	// goroutines on every request.
	client := &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: *vus,
		DisableCompression:  true,
	}}

	ctx, cancel := context.WithTimeout(context.Background(), *duration)
	defer cancel()
	var c counters
	var wg sync.WaitGroup
	start := time.Now()
	for range *vus {
		wg.Go(func() {
			for ctx.Err() == nil {
				stream(ctx, client, *url+"/chat/completions", payload, &c)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)

	s := summary{
		Client: "bare", VUs: *vus, DurationSec: elapsed.Seconds(),
		Requests: c.requests.Load(), Failed: c.failed.Load(), OutputTokens: c.tokens.Load(), Events: c.events.Load(),
	}
	s.TokensPerSec = float64(s.OutputTokens) / s.DurationSec
	_ = json.NewEncoder(os.Stdout).Encode(s)
}

// stream makes one request and reads its answer to [DONE].
func stream(ctx context.Context, client *http.Client, url string, payload []byte, c *counters) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		countFailure(ctx, c)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		countFailure(ctx, c)
		return
	}
	br := bufio.NewReader(resp.Body)
	var (
		tokens int64
		events int64
		text   []byte // kept like a real client keeps the answer
	)
	for {
		line, err := br.ReadBytes('\n')
		if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			data = bytes.TrimSpace(data)
			if string(data) == "[DONE]" {
				c.requests.Add(1)
				c.tokens.Add(tokens)
				c.events.Add(events)
				return
			}
			var ch chunk
			if json.Unmarshal(data, &ch) == nil {
				events++
				for _, choice := range ch.Choices {
					text = append(text, choice.Delta.Content...)
				}
				if ch.Usage != nil {
					tokens = ch.Usage.CompletionTokens
				}
			}
		}
		if err != nil {
			countFailure(ctx, c)
			return
		}
	}
}

// countFailure counts a failed answer, except the ones cut by the end of the
// run, which k6 does not count either.
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
