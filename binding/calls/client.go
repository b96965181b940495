package calls

// The JS Client: its options, what every Client of a VU shares, and what a
// call reads of k6's execution state. chat() is chat.go's.

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/binding/k6env"
	"github.com/llmstream/xk6-llmstream/binding/runstate"
	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/redact"
	"github.com/llmstream/xk6-llmstream/internal/rxstamp"
	"github.com/llmstream/xk6-llmstream/internal/sample"
	"github.com/llmstream/xk6-llmstream/internal/selfwatch"
	"github.com/llmstream/xk6-llmstream/internal/stream"
	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
	"github.com/llmstream/xk6-llmstream/internal/tracectx"
)

// clientEnv is what every Client of a VU shares: the VU, the count of streams
// in flight in the process, and where finished calls go.
type ClientEnv struct {
	VU     modules.VU
	Active *atomic.Int64
	Scope  k6env.VUScope // the VU's view of a split test, for the run record
	Sinks  Sinks
	// transports are the VU's HTTP transports, one per HTTP version.
	Transports *Transports
	// lag watches the process's own lag while calls are in flight.
	Lag *selfwatch.Watcher
	// server holds the process's serverMetrics endpoints.
	Server *runstate.ServerState
	// workers are the goroutines calls run on (workers.go).
	Workers *Workers
	// due is the VU's claimed schedule credit, until its call takes it.
	Due *k6env.DueSlot
	// pace is the VU's user-centric timing (binding/k6env/pace.go).
	Pace *k6env.VUPace
}

// Client is the JS Client: one endpoint, protocol and set of defaults.
type Client struct {
	env      ClientEnv
	opts     *config.Client
	fallback *Client
	count    func(string) int
	redact   *redact.Redactor // the client's secrets (redact.go)
	label    string           // the client's name in tags and results (redact.go)
	// gapSampler is the process-wide sampler of gapSamples 'sampled'.
	gapSampler *sample.Sampler
	// sizes are the last answer's, to size the next one's text and gaps.
	sizes stream.Sizes
	// tracer draws the calls' trace contexts (nil without the tracing option).
	tracer *tracectx.Generator
	// lastBody is the last chat body and its plan, lastEmbed and lastRerank
	// the last embed and rerank bodies and what they asked, lastWire the
	// last of these in the client's wire format (body_memo.go).
	lastBody              bodyMemo[bodyPlan]
	lastEmbed, lastRerank bodyMemo[*retrievalOp]
	lastWire              struct {
		op *retrievalOp
		w  *retrievalWire
	}
	// tagMemo is the last attempt tag set its calls' samples carried, and
	// tagGetter the last call tag set's Get (tag_memo.go).
	tagMemo   tagMemo
	tagGetter tagGetter
	// lastHeaders are the last call's headers before its own (header_template.go).
	lastHeaders headerTemplate
	// lastURL is the last call's URL as k6 parsed it (url_memo.go), and
	// lastJoin the last base URL and path joined into it.
	lastURL  urlMemo
	lastJoin joinMemo
	// noParams are the params of a call that gives none (or an empty
	// object): the client's own, read only, shared by such calls.
	noParams *config.Call
	// chatAPI names chat calls' headers (header_template.go).
	chatAPI string
	// cleaner is the last call redactor's Clean (redact.go).
	cleaner cleanerMemo
	// payloadReaders is the last payload's GetBody (attempt.go).
	payloadReaders payloadReaders
}

// newClient builds a Client from `new Client(options)`.
func NewClient(env ClientEnv, v sobek.Value) (*Client, error) {
	rxstamp.Prime() // receive stamps on before the first request leaves (attempt.go)
	o, err := k6env.ExportObject(v, "Client options")
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, errors.New("new Client(options): options are required, at least {baseURL: '…'}")
	}
	var fallback *Client
	if f, ok := o["fallback"]; ok {
		if fallback, ok = clientOf(f); !ok {
			return nil, errors.New("Client options: fallback must be another Client")
		}
		delete(o, "fallback")
	}
	opts, err := config.ParseClient(o)
	if err != nil {
		return nil, err
	}
	// A fallback without fallbackOn means it: it takes the failures a retry
	// retries by default. A fallbackOn alone would be silently unused.
	switch {
	case fallback != nil && len(opts.FallbackOn) == 0:
		opts.FallbackOn = config.DefaultRetryOn()
	case fallback == nil && len(opts.FallbackOn) > 0:
		return nil, errors.New("Client options: fallbackOn needs a fallback (another Client) to hand the call to")
	}
	c := &Client{env: env, opts: opts, fallback: fallback, redact: clientRedactor(opts), label: clientLabel(opts),
		chatAPI: "chat " + opts.Protocol.Name}
	if c.noParams, err = config.ParseCall(nil, opts); err != nil {
		return nil, fmt.Errorf("Client options: %w", err)
	}
	if opts.Tokenizer != "none" {
		tk, err := tokenizer.Get(opts.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("Client options: %w", err)
		}
		c.count = tokenizer.NewRecent(tk).Count // a client's calls count the same short texts again
	}
	if opts.GapSamples == config.GapsSampled {
		c.gapSampler = env.Sinks.Samplers.get(opts.GapSampleRate)
	}
	if t := opts.Tracing; t != nil {
		if c.tracer, err = tracectx.NewGenerator(t.Sampling); err != nil {
			return nil, fmt.Errorf("Client options: tracing: %w", err)
		}
	}
	for _, sm := range opts.ServerMetrics {
		if err := env.Server.Add(sm, opts.Name); err != nil {
			return nil, fmt.Errorf("Client options: %w", err)
		}
	}
	fallbackLabel := ""
	if fallback != nil {
		fallbackLabel = fallback.label
	}
	env.Sinks.Report.Info.RegisterClient(opts, c.label, fallbackLabel)
	return c, nil
}

// activeVUs is k6's count of active VUs (0 outside a k6 run, e.g. in tests).
func (c *Client) activeVUs() int {
	if es := lib.GetExecutionState(c.env.VU.Context()); es != nil {
		return int(es.GetCurrentlyActiveVUsCount()) //nolint:gosec // a VU count fits
	}
	return 0
}
