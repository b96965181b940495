package calls

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/common"
	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/binding/datasets"
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/protocol"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// The HTTP request of a call, built from the client's options, the call's
// params and the body: URL, headers, the body with the protocol's streaming
// flags. attempt.go sends it.

// request builds the HTTP request of a call: a POST of the body for chat
// protocols, a GET for a raw event stream opened with chat(null); made in r.
func (c *Client) request(st *lib.State, bodyV sobek.Value, params *config.Call, item map[string]any, r *request) error {
	spec := c.opts.Protocol
	req := protocol.Request{Model: c.opts.Model, APIKey: c.opts.APIKey, ContinuousUsage: c.opts.ContinuousUsage}
	*r = request{
		method: http.MethodPost, timeouts: params.Timeouts, name: c.name(),
		transport: c.env.Transports, http: c.opts.HTTP,
		stream: stream.Config{
			Spec: spec, MaxEventSize: c.opts.MaxEventSize, MaxBodySize: c.opts.MaxBodySize,
			StallThreshold: c.opts.StallThreshold, CountTokens: c.count,
			Sizes: &c.sizes, RequireFinishReason: c.opts.RequireFinishReason,
		},
	}
	path := params.Path
	if spec.CompleteAtEOF && common.IsNullish(bodyV) {
		req.ContinuousUsage = false
		r.method, r.model = http.MethodGet, req.Model
		r.url, r.header = c.joinURL(path), c.headers(st, spec, req, params)
		r.header = r.header.Clone() // shared with other calls (header_template.go)
		r.header.Del("Content-Type")
		r.k6URL, r.urlErr = c.k6URL(r.url, r.name)
		c.setRedactor(r, c.callRedactor(params, r.url))
		return nil
	}
	bp, ok := bodyPlan{}, false
	if item == nil { // a dataset item's images change the body (planBody)
		bp, ok = c.lastBody.reuse(bodyV) // body_memo.go
	}
	if !ok {
		var err error
		if bp, err = c.planBody(bodyV, req, item); err != nil {
			return err
		}
	}
	if bp.model != "" {
		req.Model = bp.model
	}
	req.PromptOnly, r.stream.MaxTokens, r.payload = bp.promptOnly, bp.maxTokens, bp.payload
	r.getPayload = c.payloadReaders.of(bp.payload)
	if path == "" {
		path = spec.Path(req)
	}
	r.url, r.model, r.header = c.joinURL(path), req.Model, c.headers(st, spec, req, params)
	r.k6URL, r.urlErr = c.k6URL(r.url, r.name)
	c.setRedactor(r, c.callRedactor(params, r.url))
	return nil
}

// planBody exports the body, sets the protocol's streaming flags in it and
// encodes it; a body without a dataset item is kept for the next call
// (body_memo.go). req is the request as the client makes it.
func (c *Client) planBody(bodyV sobek.Value, req protocol.Request, item map[string]any) (bodyPlan, error) {
	spec := c.opts.Protocol
	body, err := requestBody(bodyV)
	if err != nil {
		return bodyPlan{}, err
	}
	if s, ok := body["stream"].(bool); ok && !s {
		return bodyPlan{}, errors.New("chat(body): body.stream is false, but this client measures streamed answers " +
			"(leave stream unset; use k6/http for non-streamed calls)")
	}
	var raw any // the body as the script gave it, before the flags are set
	if item == nil {
		if s, ok := bodyV.Export().(string); ok {
			raw = s
		} else if c, ok := copyJSON(body, 0); ok {
			raw = c
		}
	}
	var bp bodyPlan
	if m, ok := body["model"].(string); ok && m != "" {
		req.Model, bp.model = m, m
	}
	if err := datasets.AttachItemImages(spec.Name, body, item); err != nil { // binding/datasets/dataset_images.go
		return bodyPlan{}, fmt.Errorf("chat(body, {item}): %w", err)
	}
	req.PromptOnly = protocol.PromptOnly(body)
	bp.promptOnly = req.PromptOnly
	spec.Prepare(body, req)
	if spec.MaxTokens != nil {
		bp.maxTokens = spec.MaxTokens(body) // an answer that reaches it ended at the limit
	}
	if bp.payload, err = json.Marshal(body); err != nil {
		return bodyPlan{}, fmt.Errorf("chat body: %w", err)
	}
	if raw != nil {
		c.lastBody.keep(raw, bp)
	}
	return bp, nil
}

// requestBody accepts an object or a JSON string.
func requestBody(v sobek.Value) (map[string]any, error) {
	if common.IsNullish(v) {
		return nil, errors.New("chat(body): body is required (e.g. {messages: [{role: 'user', content: 'Hi'}]})")
	}
	if s, ok := v.Export().(string); ok {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("chat(body): body string is not a JSON object: %w", err)
		}
		return m, nil
	}
	m, ok := v.Export().(map[string]any)
	if !ok {
		return nil, fmt.Errorf("chat(body): body must be an object or a JSON string, got %s", v.ExportType())
	}
	return m, nil
}

// headers are a chat call's headers: the protocol's between every call's
// own and the client's and call's (header_template.go).
func (c *Client) headers(st *lib.State, spec *protocol.Spec, req protocol.Request, p *config.Call) http.Header {
	key := headerKey{api: c.chatAPI, req: req}
	return c.callHeaders(st, p, key, func(h http.Header) { spec.Headers(h, req) })
}

func newKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// name labels the client in tags and results: its name, else its base URL.
func (c *Client) name() string { return c.label }

// clientName is the label of a Client a script passes (a capacity search's
// client option); ok is false for any other value.
func ClientName(v any) (name string, ok bool) {
	c, ok := clientOf(v)
	if !ok {
		return "", false
	}
	return c.name(), true
}
