package llmstream

// The JS Client: its options and chat(). chat() prepares the call's plan
// (plan.go) on the event loop, runs it off the loop (internal/policy, through
// attempt.go) and fans the outcome out (fanout.go).

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/grafana/sobek"
	"go.k6.io/k6/js/modules"
	"go.k6.io/k6/js/promises"
	"go.k6.io/k6/lib"

	"github.com/llmstream/xk6-llmstream/internal/config"
	"github.com/llmstream/xk6-llmstream/internal/rxstamp"
	"github.com/llmstream/xk6-llmstream/internal/sample"
	"github.com/llmstream/xk6-llmstream/internal/selfwatch"
	"github.com/llmstream/xk6-llmstream/internal/stream"
	"github.com/llmstream/xk6-llmstream/internal/tokenizer"
)

// clientEnv is what every Client of a VU shares: the VU, the count of streams
// in flight in the process, and where finished calls go.
type clientEnv struct {
	vu     modules.VU
	active *atomic.Int64
	scope  vuScope // the VU's view of a split test, for the run record
	sinks  sinks
	// transports are the VU's HTTP transports, one per HTTP version.
	transports *transports
	// lag watches the process's own lag while calls are in flight.
	lag *selfwatch.Watcher
	// server holds the process's serverMetrics endpoints.
	server *serverState
	// workers are the goroutines calls run on (workers.go).
	workers *workers
	// due is the VU's claimed schedule credit, until its call takes it.
	due *dueSlot
}

// Client is the JS Client: one endpoint, protocol and set of defaults.
type Client struct {
	env      clientEnv
	opts     *config.Client
	fallback *Client
	count    func(string) int
	redact   redactor
	// gapSampler is the process-wide sampler of gapSamples 'sampled'.
	gapSampler *sample.Sampler
	// sizes are the last answer's, to size the next one's text and gaps.
	sizes stream.Sizes
}

// newClient builds a Client from `new Client(options)`.
func newClient(env clientEnv, v sobek.Value) (*Client, error) {
	rxstamp.Prime() // receive stamps on before the first request leaves (attempt.go)
	o, err := exportObject(v, "Client options")
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, errors.New("new Client(options): options are required, at least {baseURL: '…'}")
	}
	var fallback *Client
	if f, ok := o["fallback"]; ok {
		if fallback, ok = f.(*Client); !ok {
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
	c := &Client{env: env, opts: opts, fallback: fallback, redact: newRedactor(opts)}
	if opts.Tokenizer != "none" {
		tk, err := tokenizer.Get(opts.Tokenizer)
		if err != nil {
			return nil, fmt.Errorf("Client options: %w", err)
		}
		c.count = tk.Count
	}
	if opts.GapSamples == config.GapsSampled {
		c.gapSampler = env.sinks.samplers.get(opts.GapSampleRate)
	}
	if opts.ServerMetrics != nil {
		if err := env.server.add(*opts.ServerMetrics, opts.Name); err != nil {
			return nil, err
		}
	}
	env.sinks.report.info.registerClient(opts)
	return c, nil
}

// Chat starts a streamed call and returns a Promise of its result. It never
// rejects for a failed call (the result says ok: false) unless k6's throw option is set.
func (c *Client) Chat(body sobek.Value, params sobek.Value) (*sobek.Promise, error) {
	vu := c.env.vu
	st := vu.State()
	if st == nil {
		return nil, errors.New("chat() can only be called in the VU context (default function, scenarios, setup), not in init")
	}
	plan, err := c.plan(st, body, params)
	if err != nil {
		return nil, err
	}
	p, resolve, reject := promises.New(vu)
	ctx := vu.Context()
	c.env.sinks.report.info.noteLoad(c.env.scope)
	c.env.server.noteCall(st)
	due := c.env.due.take() // the first call after Schedule.next() is the credit's send
	c.env.workers.run(func() {
		defer plan.close()
		// The load a call met is the load when it started: read both counts now.
		ld := callLoad{active: int(c.env.active.Add(1)), vus: c.activeVUs(), due: due}
		c.env.lag.Acquire()
		start := time.Now()
		out := plan.run(ctx)
		if lag, ok := c.env.lag.Since(start); ok {
			out.ClientLag = lag
		}
		c.env.lag.Release()
		c.env.active.Add(-1)
		c.env.sinks.lagWarning.Check(st.Logger, out.ClientLag)
		c.env.sinks.lagWarning.NoteTTFT(st.Logger, out.TTFTCheck())
		// The call's times are taken; what is left (samples, report, the JS
		// result) can wait. When many calls end together, the requests that
		// follow them are waiting for a CPU too, queued behind these
		// fan-outs: a request is written by its connection's own goroutine,
		// and while it waits its TTFT grows (Result.SendWait). Yielding here
		// lets them go first.
		runtime.Gosched()
		result := fanOut(ctx, out, st.Samples, c.env.sinks, ld)
		if st.Options.Throw.Bool && !out.OK() {
			reject(fmt.Errorf("llmstream: %s", out.Final().Result.Err))
			return
		}
		resolve(result)
	})
	// The script's next statements can wait; the request cannot without
	// growing its TTFT. Yield so the call's goroutine takes t0, gets its
	// connection and hands the request to the writer before the VU's
	// JavaScript runs on (and, in a wave, before the calls it starts next).
	runtime.Gosched()
	return p, nil
}

// activeVUs is k6's count of active VUs (0 outside a k6 run, e.g. in tests).
func (c *Client) activeVUs() int {
	if es := lib.GetExecutionState(c.env.vu.Context()); es != nil {
		return int(es.GetCurrentlyActiveVUsCount()) //nolint:gosec // a VU count fits
	}
	return 0
}
