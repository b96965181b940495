package embed

import (
	"fmt"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/measure"
	"github.com/llmstream/xk6-llmstream/internal/stream"
)

// Operations, the op tag of their samples.
const (
	OpEmbed  = "embed"
	OpRerank = "rerank"
)

// Result holds the figures of one finished embed or rerank attempt.
type Result struct {
	Op     string
	API    string
	OK     bool
	Err    *stream.Error
	Status int
	// Items is the batch: inputs embedded, or documents reranked.
	Items     int
	Count     int // vectors or results returned
	Dimension int // embed: the vectors' length
	Vectors   [][]float64
	Ranked    []Ranked // rerank: best first
	// ClientTopN says the rerank API has no top-N field and the client cut
	// the answer (the server scored every document).
	ClientTopN bool
	// InputTokens and where they come from: TokensFromUsage (the server),
	// TokensFromTokenizer (the client), or "" with InputTokens 0: unknown.
	InputTokens int64
	TokenSource string
	// TTFB is t0 → response headers, Duration t0 → the body's last byte,
	// Parse the client's own time reading the body after it (never in
	// Duration). Not measured: none.
	TTFB, Duration, Parse       measure.Duration
	RequestBytes, ResponseBytes int64
	Model, RequestID, Proto     string
	ServerTimings               map[string]float64
	RetryAfter                  measure.Duration
	Connect                     time.Duration
	Start, End                  time.Time

	// stream is StreamResult's: the attempt as the policy reads it lives as
	// long as its figures, one allocation for both.
	stream stream.Result
}

// InputTokensPerSec is the inputs' tokens over Duration; 0 when either is unknown.
func (r *Result) InputTokensPerSec() float64 {
	d, ok := r.Duration.Get()
	if r.InputTokens <= 0 || !ok || d <= 0 {
		return 0
	}
	return float64(r.InputTokens) / d.Seconds()
}

func newResult(op, api string, a *Attempt, items int) *Result {
	return &Result{
		Op: op, API: api, OK: a.Err == nil, Err: a.Err, Status: a.Status, Items: items,
		TTFB: a.TTFB(), Duration: a.Duration(),
		RequestBytes: a.RequestBytes, ResponseBytes: a.ResponseBytes, RequestID: a.RequestID, Proto: a.Proto,
		ServerTimings: a.ServerTimings, RetryAfter: a.RetryAfter, Connect: a.Connect, Start: a.Start, End: a.End,
	}
}

func (r *Result) fail(t stream.ErrorType, msg string) {
	r.OK, r.Err = false, &stream.Error{Type: t, Message: msg}
}

// tokens sets the input count: the server's, else count over texts (nil:
// no tokenizer, the count stays unknown).
func (r *Result) tokens(server int64, count func(string) int, texts func(func(string))) {
	switch {
	case server > 0:
		r.InputTokens, r.TokenSource = server, stream.TokensFromUsage
	case count != nil:
		var n int64
		texts(func(s string) { n += int64(count(s)) })
		r.InputTokens, r.TokenSource = n, stream.TokensFromTokenizer
	}
}

// FinishEmbed reads the attempt's answer: parse time is timed on its own,
// and an answer whose vector count differs from the inputs' fails as a
// decode error. keep asks for the vectors' values.
func FinishEmbed(a *Attempt, api *API, req *Request, keep bool, count func(string) int) *Result {
	r := newResult(OpEmbed, api.Name, a, len(req.Inputs))
	if !r.OK {
		return r
	}
	t := time.Now()
	ans, err := api.Parse(a.Body, keep)
	r.Parse = measure.Of(time.Since(t))
	a.Release() // the answer keeps no view of the body
	if err != nil {
		r.fail(stream.ErrDecode, err.Error())
		return r
	}
	r.Count, r.Dimension, r.Vectors, r.Model = ans.Count, ans.Dimension, ans.Vectors, ans.Model
	r.ServerTimings = mergeTimings(r.ServerTimings, ans.ServerTimings)
	if ans.Count != len(req.Inputs) {
		r.fail(stream.ErrDecode, fmt.Sprintf("the answer has %d embeddings for %d inputs", ans.Count, len(req.Inputs)))
	}
	r.tokens(ans.InputTokens, count, func(f func(string)) {
		for _, s := range req.Inputs {
			f(s)
		}
	})
	return r
}

// FinishRerank reads a rerank attempt's answer. The tokenizer's count is
// the query once per document plus every document, as a cross-encoder sees
// the pairs (without its separator tokens, which it does not know).
func FinishRerank(a *Attempt, api *RerankAPI, req *RerankRequest, count func(string) int) *Result {
	r := newResult(OpRerank, api.Name, a, len(req.Documents))
	if !r.OK {
		return r
	}
	t := time.Now()
	ans, err := api.Parse(a.Body, req)
	r.Parse = measure.Of(time.Since(t))
	a.Release() // the answer keeps no view of the body
	if err != nil {
		r.fail(stream.ErrDecode, err.Error())
		return r
	}
	r.Ranked, r.Count, r.Model, r.ClientTopN = ans.Results, len(ans.Results), ans.Model, ans.ClientTopN
	r.tokens(ans.InputTokens, count, func(f func(string)) {
		for _, d := range req.Documents {
			f(req.Query)
			f(d)
		}
	})
	return r
}

func mergeTimings(into, from map[string]float64) map[string]float64 {
	if len(from) == 0 {
		return into
	}
	if into == nil {
		into = make(map[string]float64, len(from))
	}
	for k, v := range from {
		into[k] = v
	}
	return into
}
