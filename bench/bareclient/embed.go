package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
)

// With -embed the floor is an embeddings client: each goroutine posts one
// input, reads the answer whole and decodes it with encoding/json, as a
// hand-written load generator for a retrieval service would. The per-call
// benchmark (make bench-calls) sets k6's module and k6's own HTTP module
// posting the same request beside it.

// embedInput is the one input of every embeddings call; bench/k6-embed.js
// and bench/k6-http-embed.js send the same.
const embedInput = "chunk 0 of the quarterly report on load testing"

// embeddings is the part of an OpenAI embeddings answer this client reads.
type embeddings struct {
	Data []struct {
		Embedding []float64 `json:"embedding"`
	} `json:"data"`
	Usage struct {
		PromptTokens int64 `json:"prompt_tokens"`
	} `json:"usage"`
}

func (o options) embedBody() []byte {
	p, err := json.Marshal(map[string]any{"model": o.model, "input": embedInput})
	if err != nil {
		panic(err)
	}
	return p
}

// embedCall makes one embeddings call and counts it (a failure unless the
// status is 200 and the answer decodes with one vector).
func embedCall(ctx context.Context, client *http.Client, url string, payload []byte, c *counters) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		countFailure(ctx, c)
		return
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	var e embeddings
	if err != nil || resp.StatusCode != http.StatusOK || json.Unmarshal(b, &e) != nil || len(e.Data) != 1 {
		countFailure(ctx, c)
		return
	}
	c.requests.Add(1)
}
