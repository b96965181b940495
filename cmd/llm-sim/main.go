// Command llm-sim is a simulated OpenAI-compatible LLM server whose timing
// comes from a model of a continuous-batching inference engine. See
// cmd/llm-sim/README.md and `llm-sim --help`.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/llmstream/xk6-llmstream/internal/sim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// list is a repeatable string flag.
type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// run is main without the process: it returns the exit code when ctx ends or
// the server fails.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llm-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := sim.DefaultConfig()
	o := declareFlags(fs, def)
	fs.Usage = func() { usage(fs) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "llm-sim: unexpected argument %q (see --help)\n", fs.Arg(0))
		return 2
	}
	if *o.listProfs {
		return printProfiles(stdout)
	}
	cfg, err := o.simConfig(fs, def)
	if err != nil {
		fmt.Fprintf(stderr, "llm-sim: %v\n", err)
		return 2
	}
	tr, err := transport(*o.useTLS, *o.tlsCert, *o.tlsKey, *o.http2, cfg.Addr)
	if err != nil {
		fmt.Fprintf(stderr, "llm-sim: %v\n", err)
		return 2
	}
	return serve(ctx, cfg, tr, stdout, stderr)
}

// options are llm-sim's flags as parsed.
type options struct {
	addr, profile, trace, config, tokName, tlsCert, tlsKey *string
	seed                                                   *uint64
	maxBody                                                *int64
	traceBody, listProfs, useTLS, http2                    *bool
	models, sets, faults                                   list
}

// declareFlags declares llm-sim's flags on fs, with def's settings as their
// defaults.
func declareFlags(fs *flag.FlagSet, def sim.Config) *options {
	o := &options{
		addr:      fs.String("addr", def.Addr, "listen address `host:port` (port 0 picks a free one; the line printed says which)"),
		profile:   fs.String("profile", "demo", "profile of the default model and of --model entries without one: "+strings.Join(sim.ProfileNames(), ", ")),
		seed:      fs.Uint64("seed", def.Seed, "seed of output text, sampled output lengths and fault draws"),
		trace:     fs.String("trace", "", "write one JSON line of ground truth per generation request to `FILE`"),
		traceBody: fs.Bool("trace-bodies", false, "the --trace lines also hold each request's body and headers (credentials redacted)"),
		config:    fs.String("config", "", "read settings from a JSON (.json) or YAML `FILE`; flags given on the command line win"),
		maxBody:   fs.Int64("max-body-bytes", def.MaxBodyBytes, "largest request body accepted, in bytes (larger: 413)"),
		tokName:   fs.String("tokenizer", def.Tokenizer, "encoding that counts prompt tokens"),
		listProfs: fs.Bool("list-profiles", false, "print every profile's settings as JSON and exit"),
		useTLS:    fs.Bool("tls", false, "serve HTTPS with a self-signed certificate made at start (for 127.0.0.1, ::1, localhost and the --addr host); clients must skip verification (k6: insecureSkipTLSVerify)"),
		tlsCert:   fs.String("tls-cert", "", "serve HTTPS with the PEM certificate (chain) in `FILE` (with --tls-key)"),
		tlsKey:    fs.String("tls-key", "", "PEM private key `FILE` of --tls-cert"),
		http2:     fs.Bool("http2", true, "serve HTTP/2 as well as HTTP/1.1: by ALPN over TLS, as h2c (prior knowledge) in cleartext; --http2=false serves HTTP/1.1 only"),
	}
	fs.Var(&o.models, "model", "serve a model: `NAME[=PROFILE]` (repeatable; the first is the default model; replaces the config file's models)")
	fs.Var(&o.sets, "set", "set a profile knob on every model: `KNOB=VALUE` (repeatable; knobs below)")
	fs.Var(&o.faults, "fault", "give every model a random fault: `SPEC:P`, e.g. stall=2000@5:0.01 (repeatable; SPEC as in X-Sim-Fault)")
	return o
}

// simConfig is the server's configuration: the config file's (def without
// one), with the flags given on the command line over it.
func (o *options) simConfig(fs *flag.FlagSet, def sim.Config) (sim.Config, error) {
	cfg := def
	if *o.config != "" {
		var err error
		if cfg, err = sim.LoadConfigFile(*o.config, def); err != nil {
			return cfg, fmt.Errorf("config: %w", err)
		}
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["addr"] || cfg.Addr == "" {
		cfg.Addr = *o.addr
	}
	if set["seed"] {
		cfg.Seed = *o.seed
	}
	if set["trace"] {
		cfg.Trace = *o.trace
	}
	if set["trace-bodies"] {
		cfg.TraceBodies = *o.traceBody
	}
	if set["max-body-bytes"] {
		cfg.MaxBodyBytes = *o.maxBody
	}
	if set["tokenizer"] {
		cfg.Tokenizer = *o.tokName
	}
	if err := applyModels(&cfg, o.models, *o.profile, *o.config == "" || set["profile"]); err != nil {
		return cfg, err
	}
	if err := applyKnobs(&cfg, o.sets, o.faults); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// transport turns the TLS and HTTP/2 flags into a sim.Transport.
func transport(selfSigned bool, certFile, keyFile string, http2 bool, addr string) (sim.Transport, error) {
	tr := sim.Transport{HTTP2: http2}
	var err error
	switch {
	case certFile != "" || keyFile != "":
		if selfSigned {
			return tr, errors.New("--tls makes its own certificate: give either --tls or --tls-cert/--tls-key")
		}
		tr.TLS, err = sim.FileTLS(certFile, keyFile)
	case selfSigned:
		host, _, _ := net.SplitHostPort(addr)
		tr.TLS, err = sim.SelfSignedTLS(host)
	}
	return tr, err
}

// applyModels sets the served models from --model, or gives the default
// model the --profile when no config file chose models.
func applyModels(cfg *sim.Config, models []string, profile string, useProfile bool) error {
	if len(models) == 0 {
		if useProfile && len(cfg.Models) == 1 && cfg.Models[0].Name == sim.DefaultModelName {
			m, err := sim.NewModel(sim.DefaultModelName, profile)
			if err != nil {
				return err
			}
			cfg.Models = []sim.ModelConfig{m}
		}
		return nil
	}
	cfg.Models = nil
	for _, spec := range models {
		name, prof, ok := strings.Cut(spec, "=")
		if !ok {
			prof = profile
		}
		m, err := sim.NewModel(strings.TrimSpace(name), strings.TrimSpace(prof))
		if err != nil {
			return fmt.Errorf("--model %s: %w", spec, err)
		}
		cfg.Models = append(cfg.Models, m)
	}
	return nil
}

// applyKnobs applies --set and --fault to every model.
func applyKnobs(cfg *sim.Config, sets, faults []string) error {
	for i := range cfg.Models {
		m := &cfg.Models[i]
		for _, kv := range sets {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return fmt.Errorf("--set %s: want KNOB=VALUE", kv)
			}
			if err := m.SetKnob(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
				return fmt.Errorf("--set %s: %w", kv, err)
			}
		}
		for _, f := range faults {
			i := strings.LastIndex(f, ":")
			if i < 0 {
				return fmt.Errorf("--fault %s: want SPEC:PROBABILITY", f)
			}
			p, err := strconv.ParseFloat(f[i+1:], 64)
			if err != nil {
				return fmt.Errorf("--fault %s: probability: %w", f, err)
			}
			if m.Faults == nil {
				m.Faults = map[string]float64{}
			}
			m.Faults[strings.TrimSpace(f[:i])] = p
		}
	}
	return nil
}

func serve(ctx context.Context, cfg sim.Config, tr sim.Transport, stdout, stderr io.Writer) int {
	srv, err := sim.New(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "llm-sim: %v\n", err)
		return 2
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		_ = srv.Close()
		fmt.Fprintf(stderr, "llm-sim: %v\n", err)
		return 1
	}
	ln = sim.StampReceives(ln)
	hs := srv.HTTPServer(tr)
	errc := make(chan error, 1)
	if tr.TLS != nil {
		go func() { errc <- hs.ServeTLS(ln, "", "") }()
	} else {
		go func() { errc <- hs.Serve(ln) }()
	}
	protos := "HTTP/1.1"
	if tr.HTTP2 {
		protos += map[bool]string{false: " and h2c", true: " and HTTP/2"}[tr.TLS != nil]
	}
	fmt.Fprintf(stderr, "llm-sim: serving %s (default model %s) over %s\n", strings.Join(srv.Models(), ", "), srv.Models()[0], protos)
	fmt.Fprintf(stdout, "llm-sim listening on %s://%s\n", tr.Scheme(), ln.Addr())

	code := 0
	select {
	case <-ctx.Done():
	case err := <-errc:
		fmt.Fprintf(stderr, "llm-sim: %v\n", err)
		code = 1
	}
	// End the streams in flight (they get a shutdown error event), then let
	// their handlers finish writing.
	closed := make(chan struct{})
	go func() { _ = srv.Close(); close(closed) }()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		_ = hs.Close()
	}
	<-closed
	return code
}

func usage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `llm-sim: a simulated OpenAI-compatible LLM server whose timing comes from a
model of a continuous-batching engine (running slots, a waiting queue, prefill
and decode steps, a prefix cache), with faults on demand and a ground-truth trace.

Usage: llm-sim [flags]
  e.g. llm-sim --addr 127.0.0.1:8000 --profile demo --model sim-large=demo --model sim-small=fast --trace trace.jsonl

Transport: HTTP/1.1 and h2c (HTTP/2 with prior knowledge) in cleartext; with
--tls (self-signed) or --tls-cert/--tls-key, HTTPS with HTTP/1.1 and HTTP/2 by
ALPN. --http2=false serves HTTP/1.1 only. /metrics counts accepted connections;
the trace numbers each request's connection.

Endpoints: POST /v1/chat/completions, POST /v1/completions, POST /v1/responses,
POST /v1/messages (Anthropic), POST /api/chat and /api/generate (Ollama, NDJSON),
POST /v1beta/models/{model}:streamGenerateContent?alt=sse (Gemini),
POST /generate_stream (TGI), POST /completion (llama.cpp), GET|POST /v1/sim/events
(raw SSE); embeddings at POST /v1/embeddings, /api/embed, /embed and Gemini's
:embedContent / :batchEmbedContents, rerank at POST /v1/rerank, /v2/rerank and
/rerank (TEI's with texts); GET /v1/models (vLLM's shape: max_model_len is
max_context_tokens), GET /health, GET /metrics (Prometheus text).

Flags:
`)
	fs.PrintDefaults()
	fmt.Fprint(w, "\nProfile knobs (--set KNOB=VALUE, or per model in --config):\n")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	for _, k := range sim.Knobs() {
		fmt.Fprintf(tw, "  %s\t%s\n", k.Key, k.Help)
	}
	_ = tw.Flush()
	fmt.Fprint(w, `
Engine model: each step admits waiting requests into free slots (first come,
first served), prefills the admitted prompts and gives every decoding sequence
tokens_per_step tokens. A step costs [prefill_base_ms + prefill_per_token_ms x
uncached prompt tokens, if it prefills] + [decode_base_ms + decode_per_seq_ms x
decoding sequences, if it decodes], so a long prompt delays everyone's next token.

Profiles (llm-sim --list-profiles prints every value):
  demo   16 slots, ~3 ms prefill per 100 tokens, 20 ms + 0.5 ms/seq decode step, prefix cache
  fast   zero delays, 1024 slots: benchmarks and quick tests
  slow   one token per stream per second, 10 000 slots: thousands of streams open for minutes, cheaply
  small  4 slots, 15 ms + 2 ms/seq decode: queueing and the knee at low load
  large  32 slots, 40 ms + 1.5 ms/seq decode, 0.08 ms/token prefill

Faults, per request with the header X-Sim-Fault (comma-separated), or drawn at
random with --fault SPEC:P or "faults" in the config (ms: milliseconds, k: output tokens):
  stall=MS@K       pause MS after K tokens (K defaults to 1)
  ttft=MS          extra MS before the first token
  disconnect@K     drop the connection after K tokens (K defaults to 0)
  error@K          an OpenAI error data event after K tokens, then [DONE]
  malformed@K      a data line of invalid JSON after K tokens (the stream goes on)
  status=CODE      answer HTTP CODE (400..599) before streaming; 429 adds Retry-After: 1
  headers_delay=MS wait MS before the response headers
  html             answer 200 with a text/html page
  gateway=MS       buffer the stream and flush it every MS (a buffering gateway)
  none             no fault (and no random fault) for this request

Ground truth: X-Request-Id on every response (the client's, echoed, or a new
one); a Server-Timing trailer (queue, prefill, decode, total; dur in ms); with
--trace, one JSON line per request (Unix ns: the wall clock at start plus
monotonic time, so a clock step mid-run is in no duration; arrival, admission,
prefill start/end, each chunk's write+flush, done; token counts; outcome).

Run the load generator and the server on different machines for real tests:
on one machine they compete for CPU and the figures describe neither.
`)
}

func printProfiles(stdout io.Writer) int {
	names := sim.ProfileNames()
	sort.Strings(names)
	fmt.Fprintln(stdout, "{")
	for i, n := range names {
		p, _ := sim.Profile(n)
		b, _ := json.MarshalIndent(p, "  ", "  ")
		sep := ","
		if i == len(names)-1 {
			sep = ""
		}
		fmt.Fprintf(stdout, "  %q: %s%s\n", n, b, sep)
	}
	fmt.Fprintln(stdout, "}")
	return 0
}
