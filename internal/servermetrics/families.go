// Package servermetrics reads an inference server's own Prometheus endpoint
// while a test runs: it scrapes on its own goroutine, maps each engine's
// metric families to canonical quantities, and turns a baseline and a final
// snapshot into exact per-run (and per-stage) deltas. It knows nothing of k6.
package servermetrics

import "strings"

// Canonical quantities. Their names are the keys of a Window's maps and the
// suffixes of the llm_server_* k6 metrics.
const (
	// Gauges, sampled at every scrape.
	RequestsWaiting = "requests_waiting"
	RequestsRunning = "requests_running"
	KVCacheUsage    = "kv_cache_usage" // fraction 0-1 of KV blocks in use

	// Counters, read as deltas.
	RequestsFinished = "requests_finished"
	PromptTokens     = "prompt_tokens"
	GenerationTokens = "generation_tokens"
	PrefixQueries    = "prefix_cache_queries" // prompt tokens looked up (tokens, not requests)
	PrefixHits       = "prefix_cache_hits"    // prompt tokens found cached
	Preemptions      = "preemptions"
	// Speculative decoding: drafts proposed, tokens drafted, tokens the
	// target model accepted (specdecode.go).
	SpecDrafts         = "spec_drafts"
	SpecDraftTokens    = "spec_draft_tokens"
	SpecAcceptedTokens = "spec_accepted_tokens"

	// Histograms (seconds), read as bucket deltas.
	TTFT      = "ttft"
	ITL       = "itl"
	E2E       = "e2e"
	Queue     = "queue"
	Prefill   = "prefill"
	Decode    = "decode"
	Inference = "inference"
)

// family is one exposed metric family that carries a canonical quantity.
// Counter names are written without "_total": both spellings match, because
// Python's prometheus_client adds the suffix and Go's client_golang does not.
type family struct {
	name   string
	engine string
	// fromSum reads a counter from a histogram's _sum (TGI and TEI count
	// tokens only as per-request length histograms).
	fromSum bool
}

// Engines, as the report and the k6 tag "engine" name them.
const (
	EngineVLLM     = "vllm"
	EngineSGLang   = "sglang"
	EngineTGI      = "tgi"
	EngineLlamaCpp = "llamacpp"
	EngineTEI      = "tei"
	EngineLLMSim   = "llm-sim"
	// EngineDCGM is NVIDIA's GPU exporter: no engine, the GPUs under one.
	EngineDCGM    = "dcgm"
	EngineUnknown = "unknown"
)

// enginePrefixes tell an engine by its families' names. llm-sim is checked
// first: it exposes vLLM's families as well as its own.
var enginePrefixes = []struct{ prefix, engine string }{ //nolint:gochecknoglobals // read-only table
	{"llmsim_", EngineLLMSim},
	{"vllm:", EngineVLLM},
	{"sglang:", EngineSGLang},
	{"tgi_", EngineTGI},
	{"llamacpp:", EngineLlamaCpp},
	{"te_", EngineTEI},
	{"DCGM_FI_", EngineDCGM},
}

// The candidates of each quantity, in order of preference: the first one the
// endpoint exposes is read (so vLLM's kv_cache_usage_perc wins over the old
// gpu_cache_usage_perc, and llm-sim's vLLM exposition over its own names).
var (
	gaugeFamilies = map[string][]family{ //nolint:gochecknoglobals // read-only table
		RequestsWaiting: {
			{name: "vllm:num_requests_waiting", engine: EngineVLLM},
			{name: "sglang:num_queue_reqs", engine: EngineSGLang},
			{name: "tgi_queue_size", engine: EngineTGI},
			{name: "llamacpp:requests_deferred", engine: EngineLlamaCpp},
			{name: "te_queue_size", engine: EngineTEI},
			{name: "llmsim_requests_waiting", engine: EngineLLMSim},
		},
		RequestsRunning: {
			{name: "vllm:num_requests_running", engine: EngineVLLM},
			{name: "sglang:num_running_reqs", engine: EngineSGLang},
			{name: "tgi_batch_current_size", engine: EngineTGI},
			{name: "llamacpp:requests_processing", engine: EngineLlamaCpp},
			{name: "te_batch_current_size", engine: EngineTEI},
			{name: "llmsim_requests_running", engine: EngineLLMSim},
		},
		KVCacheUsage: {
			{name: "vllm:kv_cache_usage_perc", engine: EngineVLLM},
			{name: "vllm:gpu_cache_usage_perc", engine: EngineVLLM}, // deprecated in vLLM 0.9
			{name: "sglang:token_usage", engine: EngineSGLang},
			{name: "llamacpp:kv_cache_usage_ratio", engine: EngineLlamaCpp}, // older builds only
		},
	}
	counterFamilies = map[string][]family{ //nolint:gochecknoglobals // read-only table
		RequestsFinished: {
			{name: "vllm:request_success", engine: EngineVLLM},
			{name: "sglang:num_requests", engine: EngineSGLang},
			{name: "tgi_request_success", engine: EngineTGI},
			{name: "te_request_success", engine: EngineTEI},
			{name: "llmsim_requests", engine: EngineLLMSim},
		},
		PromptTokens: {
			{name: "vllm:prompt_tokens", engine: EngineVLLM},
			{name: "sglang:prompt_tokens", engine: EngineSGLang},
			{name: "llamacpp:prompt_tokens", engine: EngineLlamaCpp},
			{name: "tgi_request_input_length", engine: EngineTGI, fromSum: true},
			{name: "te_request_input_length", engine: EngineTEI, fromSum: true},
			{name: "llmsim_prompt_tokens", engine: EngineLLMSim},
		},
		GenerationTokens: {
			{name: "vllm:generation_tokens", engine: EngineVLLM},
			{name: "sglang:generation_tokens", engine: EngineSGLang},
			{name: "llamacpp:tokens_predicted", engine: EngineLlamaCpp},
			{name: "tgi_request_generated_tokens", engine: EngineTGI, fromSum: true},
			{name: "llmsim_generation_tokens", engine: EngineLLMSim},
		},
		PrefixQueries: {
			{name: "vllm:prefix_cache_queries", engine: EngineVLLM},
			// SGLang looks every prompt token up: its hit ratio is cached/prompt.
			{name: "sglang:prompt_tokens", engine: EngineSGLang},
			{name: "llmsim_prefix_cache_queries", engine: EngineLLMSim},
		},
		PrefixHits: {
			{name: "vllm:prefix_cache_hits", engine: EngineVLLM},
			{name: "sglang:cached_tokens", engine: EngineSGLang},
			{name: "llmsim_prefix_cache_hits", engine: EngineLLMSim},
		},
		Preemptions: {
			{name: "vllm:num_preemptions", engine: EngineVLLM},
		},
		SpecDrafts: {
			{name: "vllm:spec_decode_num_drafts", engine: EngineVLLM},
			{name: "llamacpp:spec_decode_num_drafts", engine: EngineLlamaCpp},
		},
		SpecDraftTokens: {
			{name: "vllm:spec_decode_num_draft_tokens", engine: EngineVLLM},
			{name: "llamacpp:spec_decode_num_draft_tokens", engine: EngineLlamaCpp},
		},
		SpecAcceptedTokens: {
			{name: "vllm:spec_decode_num_accepted_tokens", engine: EngineVLLM},
			{name: "llamacpp:spec_decode_num_accepted_tokens", engine: EngineLlamaCpp},
		},
	}
	histogramFamilies = map[string][]family{ //nolint:gochecknoglobals // read-only table
		TTFT: {
			{name: "vllm:time_to_first_token_seconds", engine: EngineVLLM},
			{name: "sglang:time_to_first_token_seconds", engine: EngineSGLang},
		},
		ITL: {
			{name: "vllm:inter_token_latency_seconds", engine: EngineVLLM},
			{name: "vllm:time_per_output_token_seconds", engine: EngineVLLM}, // deprecated in vLLM 0.11
			{name: "sglang:inter_token_latency_seconds", engine: EngineSGLang},
			{name: "tgi_request_mean_time_per_token_duration", engine: EngineTGI},
		},
		E2E: {
			{name: "vllm:e2e_request_latency_seconds", engine: EngineVLLM},
			{name: "sglang:e2e_request_latency_seconds", engine: EngineSGLang},
			{name: "tgi_request_duration", engine: EngineTGI},
			{name: "te_request_duration", engine: EngineTEI},
		},
		Queue: {
			{name: "vllm:request_queue_time_seconds", engine: EngineVLLM},
			{name: "sglang:queue_time_seconds", engine: EngineSGLang},
			{name: "tgi_request_queue_duration", engine: EngineTGI},
			{name: "te_request_queue_duration", engine: EngineTEI},
		},
		Prefill: {
			{name: "vllm:request_prefill_time_seconds", engine: EngineVLLM},
		},
		Decode: {
			{name: "vllm:request_decode_time_seconds", engine: EngineVLLM},
		},
		Inference: {
			{name: "vllm:request_inference_time_seconds", engine: EngineVLLM},
			{name: "tgi_request_inference_duration", engine: EngineTGI},
			{name: "te_request_inference_duration", engine: EngineTEI},
		},
	}
)

// resetOnScrape are gauges whose exporter clears them at every scrape
// (llama.cpp's throughput gauges come from a bucket reset_bucket() empties), so
// sampling them would change what any other scraper sees and read nothing
// stable. Rates come from the token counters' deltas instead.
var resetOnScrape = map[string]bool{ //nolint:gochecknoglobals // read-only table
	"llamacpp:prompt_tokens_seconds":    true,
	"llamacpp:predicted_tokens_seconds": true,
}

// reasonLabels name a finished request's reason: vLLM spells it
// finished_reason, llm-d-inference-sim finish_reason, llm-sim outcome.
var reasonLabels = []string{"finished_reason", "finish_reason", "outcome"} //nolint:gochecknoglobals // read-only table

// modelLabels name the served model on a series.
var modelLabels = []string{"model_name", "model"} //nolint:gochecknoglobals // read-only table

// GaugeNames, CounterNames and HistogramNames list the canonical quantities in
// a stable order (for reports and k6 metric registration).
var (
	GaugeNames     = []string{RequestsWaiting, RequestsRunning, KVCacheUsage}                                           //nolint:gochecknoglobals // read-only
	CounterNames   = []string{RequestsFinished, PromptTokens, GenerationTokens, PrefixQueries, PrefixHits, Preemptions} //nolint:gochecknoglobals // read-only
	HistogramNames = []string{TTFT, ITL, E2E, Queue, Prefill, Decode, Inference}                                        //nolint:gochecknoglobals // read-only
)

// detectEngine names the engine whose families the endpoint exposes.
func detectEngine(names func(yield func(string) bool)) string {
	best := len(enginePrefixes)
	for n := range names {
		for i, ep := range enginePrefixes[:best] {
			if strings.HasPrefix(n, ep.prefix) {
				best = i
				break
			}
		}
	}
	if best == len(enginePrefixes) {
		return EngineUnknown
	}
	return enginePrefixes[best].engine
}
