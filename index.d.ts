/**
 * k6/x/llmstream — load-test streaming LLM APIs with k6 and see where the time goes.
 *
 * Types for editors and for `tsc --checkJs` (see docs/types.md). They follow what the
 * module accepts at run time: every object below rejects unknown keys, so a name that is
 * not declared here is an error in k6 too (a test compares both lists).
 */
declare module "k6/x/llmstream" {
  /** A duration: a k6/Go duration string ("3s", "250ms", "1m30s") or a number of milliseconds. */
  export type Duration = string | number;

  /** Wire formats the client speaks; `path` defaults to the protocol's own endpoint. */
  export type Protocol =
    | "openai-chat"
    | "openai-completions"
    | "openai-responses"
    | "anthropic"
    | "ollama"
    | "gemini"
    | "tgi"
    | "llamacpp"
    | "sse";

  /** How a failed call ended: the `error_type` tag of `llm_errors` and `result.error.type`. */
  export type ErrorType =
    | "timeout_connect"
    | "timeout_first_token"
    | "timeout_idle"
    | "timeout_total"
    | "http_429"
    | "http_4xx"
    | "http_5xx"
    | "network"
    | "stream_error"
    | "decode"
    | "truncated"
    | "canceled";

  /** Tokenizers for counting tokens when the server sends no usage. */
  export type Tokenizer = "o200k_base" | "cl100k_base" | "p50k_base" | "r50k_base";

  /** Split timeouts: each phase of a streamed call has its own limit. */
  export interface Timeouts {
    /** Dial, TLS and sending the request (default 10s; 0: no limit of its own, `total` still bounds it). */
    connect?: Duration;
    /** From sending the request to the first output-carrying event (default 60s; 0: no limit of its own). */
    firstToken?: Duration;
    /** The longest silence between two events once streaming (default 60s; 0: no limit of its own). */
    idle?: Duration;
    /** The whole call, end to end (default 10m); must be above 0. */
    total?: Duration;
  }

  /** Per-request objectives: `llm_goodput` is 1 for a successful call within all the given ones. */
  export interface SLO {
    ttft?: Duration;
    tpot?: Duration;
    e2e?: Duration;
  }

  /** Opt-in retries; a retried call counts once in `llm_requests`, with its final attempt. */
  export interface RetryOptions {
    /** Total attempts, 1 = no retry (required: `retry` without it is an error). */
    attempts: number;
    /** Error types worth another attempt (default: `http_429`, `http_5xx`, `network`, `timeout_connect`, `timeout_first_token`). */
    on?: ErrorType[];
    /** Wait between attempts: min(max, base·2^(n-1)) ± jitter (a fraction of the wait, 0..1); default 200ms, 5s, 0.2. */
    backoff?: { base?: Duration; max?: Duration; jitter?: number };
    /** Wait what a `Retry-After` header asks (default true). */
    respectRetryAfter?: boolean;
    /** `true` sends one `Idempotency-Key` header for all attempts of a call; a string names the header. */
    idempotencyKey?: boolean | string;
    /** Also retry a call that already received part of its answer (off: a partial answer is kept, never asked twice). */
    afterOutput?: boolean;
  }

  /** Protocol `sse` only: reopen a broken stream with `Last-Event-ID`. */
  export interface ReconnectOptions {
    attempts?: number;
    /** Wait before reopening when the server sent no `retry:` field (default 1s). */
    delay?: Duration;
  }

  /** What one million tokens of each kind cost. */
  export interface Prices {
    /** Per million prompt tokens. */
    input?: number;
    /** Per million prompt tokens served from the provider's prompt cache (default: `input`, no saving claimed). */
    cachedInput?: number;
    /** Per million output tokens. */
    output?: number;
    /** Per million reasoning tokens (part of the output count; default: `output`). */
    reasoning?: number;
    /** A label for reports (default "USD"). */
    currency?: string;
  }

  /** `new Client(options)`: one endpoint. */
  export interface ClientOptions {
    /** e.g. "http://127.0.0.1:8000/v1"; the protocol's path is appended, before a query the URL carries (kept on every request; a key in it is redacted). Required. */
    baseURL: string;
    /** Wire format (default "openai-chat"). */
    protocol?: Protocol;
    /** Put in the body unless the body names one; the `model` tag. */
    model?: string;
    /** Sent in the protocol's auth header; redacted from errors, results, logs and reports. */
    apiKey?: string;
    /** The `name` tag of llm_* and http_req_* samples (default: the base URL without its query). */
    name?: string;
    /** Endpoint path (or a full URL) instead of the protocol's. */
    path?: string;
    /** Extra request headers; credential headers (Authorization, x-api-key, …) are redacted like apiKey, with or without their scheme. A `Host` header names the virtual host, as in k6/http. */
    headers?: Record<string, string>;
    /** Extra tags on every sample of this client. */
    tags?: Record<string, string>;
    timeouts?: Timeouts;
    /** llm_inter_token_gap samples: at most gapSampleRate a second, each gap the same chance while the offered rate holds (default "sampled"), one per gap, one mean per request, or none. */
    gapSamples?: "sampled" | "event" | "request" | "off";
    /** The cap of gapSamples "sampled", in samples a second for the whole k6 process; default 500 (k6 keeps every Trend sample, 8 bytes each: ≈ 14 MB an hour). */
    gapSampleRate?: number;
    /** A gap longer than this counts in `llm_stalls` (default "500ms"). */
    stallThreshold?: Duration;
    slo?: SLO;
    /** Ask vLLM/SGLang for `continuous_usage_stats` (exact per-event token counts). */
    continuousUsage?: boolean;
    /** Strict end rule: an answer whose server named no finish reason (a `[DONE]` after the tokens, a `message_stop` without `stop_reason`) fails as `truncated` (default false: complete, `finishSource` says how its finish is known). */
    requireFinishReason?: boolean;
    /** Counts output tokens when the server sends no usage (default "o200k_base"; "none": one per event). */
    tokenizer?: Tokenizer | "none";
    /** Largest event in bytes (default 4 MiB); past it the call fails with `decode`, as it does for JSON nested past 512 levels. */
    maxEventSize?: number;
    /** Largest response body in bytes (default 256 MiB); past it the call fails with `decode`. */
    maxBodySize?: number;
    retry?: RetryOptions;
    /** Another client that takes the call when this one fails with an error in `fallbackOn` (by default the errors a retry retries: http_429, http_5xx, network, timeout_connect, timeout_first_token). */
    fallback?: Client;
    /** Error types that hand the call to `fallback` (needs `fallback`). */
    fallbackOn?: ErrorType[];
    /** Keep every gap in `result.gaps` (default false). */
    gaps?: boolean;
    reconnect?: ReconnectOptions;
    /**
     * HTTP version (default "auto": HTTP/2 when TLS negotiates it, else HTTP/1.1). "1.1": HTTP/1.1 only,
     * also over TLS. "2": HTTP/2 only, over TLS or in cleartext with prior knowledge (h2c).
     */
    http?: "auto" | "1.1" | "2";
    /** Prices per million tokens: every call gets a cost (`result.cost`, `llm_cost`, the report). */
    prices?: Prices;
    /** Read the servers' own Prometheus endpoints while the test runs (the engine, a GPU exporter, more replicas): the llm_server_* metrics and the report's server view. */
    serverMetrics?: ServerMetricsOptions | ServerMetricsOptions[];
    /** Send a W3C `traceparent` with every request: the trace id is in `result.traceId` and the report names the slowest calls' ids. */
    tracing?: TracingOptions;
  }

  /** `tracing`: the trace context each call carries to the server (OpenTelemetry on the gateway or engine reads it). */
  export interface TracingOptions {
    /** The header sent: "w3c" (`traceparent`), the only one (default "w3c"). */
    propagator?: "w3c";
    /** Share of calls whose `traceparent` has the sampled flag set, 0 to 1 (default 1); every call carries a trace id either way. */
    sampling?: number;
  }

  /** `serverMetrics`: the inference server's Prometheus endpoint (clients naming one url share its scrape). */
  export interface ServerMetricsOptions {
    /** e.g. "http://vllm:8000/metrics". Required. */
    url: string;
    /** Names the endpoint in the k6 tag `source` and the report, e.g. "engine", "dcgm" (default: its host:port); distinct within one list. */
    source?: string;
    /** Sent with every scrape (e.g. Authorization); redacted from logs, errors and reports. */
    headers?: Record<string, string>;
    /** Between scrapes (default "1s", at least 50 ms). */
    interval?: Duration;
    /** Of one scrape (default "10s"). */
    timeout?: Duration;
    /** Keep only this served model's series (default: all, summed). */
    model?: string;
    /** Where the engine lists its models and context lengths (OpenAI's /v1/models; default: beside the metrics path of a serving engine); 'off' reads none. */
    models?: 'off' | string;
  }

  /** What one million tokens of each kind cost. */
  /** What a call cost: every attempt's tokens, priced by its route's client. */
  export interface Cost {
    total: number;
    input: number;
    cachedInput: number;
    output: number;
    reasoning: number;
    /** What the cached prompt tokens did not cost compared with uncached ones. */
    savedByCache: number;
    /** The client's currency ("mixed" when primary and fallback differ). */
    currency: string;
  }

  /** One event as `onEvent` sees it. */
  export interface StreamEvent {
    /** The SSE event name (or the protocol's event type). */
    type: string;
    /** The SSE id, "" when absent. */
    id: string;
    /** The raw event data. */
    data: string;
    /** Milliseconds since the first event, taken in Go when its bytes arrived. */
    time: number;
  }

  /** `client.chat(body, params)`: per-call settings. */
  export interface CallParams {
    /** Tags on this call's samples, e.g. `{category: 'short'}` (`error_type`, `cache`, `protocol` are reserved). */
    tags?: Record<string, string>;
    /** Extra request headers for this call; credential headers are redacted like the client's. */
    headers?: Record<string, string>;
    /** Override the client's timeouts for this call. */
    timeouts?: Timeouts;
    /** Endpoint path for this call. */
    path?: string;
    /** Keep every gap in `result.gaps` for this call. */
    gaps?: boolean;
    /** A dataset item: tags the call with its category and turn. */
    item?: DatasetItem;
    /** Runs on the event loop after the event was timestamped; never in the timing path. */
    onEvent?: (e: StreamEvent) => void;
  }

  /** Token counts as the server reported them. */
  export interface Usage {
    promptTokens: number;
    completionTokens: number;
    /** `null` when the server's usage had no cached-token field (it said nothing about its cache). */
    cachedTokens: number | null;
    reasoningTokens: number;
    totalTokens: number;
  }

  /** One tool call assembled from the stream. */
  export interface ToolCall {
    index: number;
    id: string;
    name: string;
    /** The arguments as streamed (a JSON text). */
    arguments: string;
  }

  /** Why a call failed: its class and a message (secrets redacted). */
  export interface ChatError {
    type: ErrorType;
    message: string;
  }

  /**
   * What `client.chat` resolves with. Times are in ms; `null` when not measurable, never a
   * made-up zero. `ok` tells the two shapes apart: `error` is `null` exactly when `ok` is true,
   * so `r.ok || r.error.type === 'timeout_idle'` type-checks.
   */
  /** One answer of a call that asked for several (n > 1). */
  export interface Choice {
    index: number;
    text: string;
    reasoningText: string;
    finishReason: string;
    /** How `finishReason` is known: named by the server, or `none` (unknown). */
    finishSource: "server" | "none";
    /** Inter-token gaps of this answer in ms, only with `gaps: true`. */
    gaps: number[] | null;
  }

  /** One HTTP attempt of a call (times in ms, null when not measured). */
  export interface Attempt {
    route: "primary" | "fallback";
    servedBy: string;
    ok: boolean;
    status: number;
    error: { type: ErrorType; message: string } | null;
    ttfb: number | null;
    ttft: number | null;
    e2e: number | null;
    reconnects: number;
  }

  export type ChatResult = ChatResultFields &
    ({ /** The call completed with the protocol's terminal event. */ ok: true; error: null } | { ok: false; error: ChatError });

  /** The fields every result has, failed or not. */
  export interface ChatResultFields {
    /** HTTP status of the final attempt (0 when no response came). */
    status: number;
    /** The answer text. */
    text: string;
    /** The reasoning output, "" for non-reasoning models. */
    reasoningText: string;
    toolCalls: ToolCall[];
    finishReason: string;
    /**
     * How `finishReason` is known: `server` (an event named it), `inferred` (nobody named it and the
     * output count reached `max_tokens`: `length`), `none` (nobody named it: unknown, or the call
     * failed); `null` for `sse`, which has no finish reasons.
     */
    finishSource: "server" | "inferred" | "none" | null;
    /** `null` when the server reported no usage. */
    usage: Usage | null;
    /** Where `outputTokens` came from. */
    tokenSource: "usage_stream" | "usage" | "tokenizer" | "events";
    /** The model the server reports. */
    model: string;
    /** Request sent → response headers. */
    ttfb: number | null;
    /** Request sent → first output-carrying event (text, reasoning or tool-call arguments). */
    ttft: number | null;
    /** Request sent → first non-reasoning output. */
    ttftAnswer: number | null;
    /** First output → first non-reasoning output: how long the model reasoned before it answered; `null` without streamed reasoning or an answer. */
    reasoningTime: number | null;
    /** Request sent → end of stream of a complete answer; `null` for a failed call (docs/metrics.md, "Failed calls"). */
    e2e: number | null;
    /** Last output event → end of stream (the terminal event or the body's end); `null` without output, or for a failed call. */
    tailTime: number | null;
    /** Time per output token after the first event; `null` for a failed call. */
    tpot: number | null;
    /** Decode speed of this request (tokens/s after the first event); `null` for a failed call. */
    tokensPerSec: number | null;
    /** Time this client spent framing, decoding and dispatching (ms). */
    clientParseTime: number | null;
    /** `clientParseTime / e2e`. */
    clientParseShare: number;
    /** Output-carrying events. */
    chunks: number;
    /** Output tokens (see `tokenSource`). */
    outputTokens: number;
    /** Gaps longer than `stallThreshold`. */
    stalls: number;
    /** Attempts after the first, on whichever route (primary retries and the fallback's). */
    retries: number;
    /** Reconnections of a raw `sse` stream. */
    reconnects: number;
    /** The client (name) that ended the call: this one or its fallback. */
    servedBy: string;
    /** The route that ended the call. */
    route: "primary" | "fallback";
    /** Every attempt of the call, in order, on every route. */
    attempts: Attempt[];
    /** The server's request id, "" when none. */
    requestId: string;
    /** The W3C trace id (32 hex digits) the call's requests carried, with the `tracing` option (or the script's own valid `traceparent`); `null` otherwise. */
    traceId: string | null;
    /** Prompt cache: cached prompt tokens > 0, none, or not reported. */
    cache: "hit" | "miss" | "unknown";
    /** The server's timings in ms (Server-Timing, llama.cpp `timings`, Ollama durations). */
    serverTimings: Record<string, number> | null;
    /** Every inter-token gap in ms, only with `gaps: true` (with n > 1, each answer's in turn). */
    gaps: number[] | null;
    /** With n > 1, each answer; null for one answer. */
    choices: Choice[] | null;
    /** The response's protocol, "HTTP/1.1" or "HTTP/2.0" ("" when no response came). */
    proto: string;
    /**
     * How late this process ran while the call did (Go scheduler latency, timer lateness), in ms: time
     * added to every timestamp the call took. `null` when the call was too short to be measured.
     */
    clientLag: number | null;
    /**
     * Whether this process made the TTFT late, by half a decode step or more: it read the first
     * token together with the next one, which the server sent a decode step later (the first gap is
     * zero while the others are not; `ttft` is the second token's), or it sent the request half a
     * decode step (and at least 1 ms) or more after t0, its connection's set-up left out
     * (`sendWait`). On Linux over HTTP/1.1 a
     * server that sent its first two tokens together is told apart (`false`). With `n` > 1, judged by
     * the first answer's gaps. `null` when it cannot be judged: fewer than three gaps, most gaps
     * zero (a server that sends in bursts), or a failed call.
     */
    ttftLate: boolean | null;
    /**
     * How long after t0 the request began to go out, in ms, connection set-up left out (a new
     * connection's dial and TLS handshake themselves): the time this process took to send it
     * (over HTTP/2, waiting for the requests ahead of it on the shared connection too). Part of `ttfb` and `ttft`. `null` when no request was written.
     */
    sendWait: number | null;
    /**
     * When the call's schedule credit was due, ms since the epoch: the first call (`chat`, `embed`, `rerank`) after
     * `Schedule.next()` is that credit's send. `null` for calls no schedule asked for (closed-model
     * loops, a conversation's later turns).
     */
    dueAt: number | null;
    /** Send − due, ms: how late this load generator sent the call (`null` without `dueAt`). */
    dispatchDelay: number | null;
    /** First output − due, ms: the TTFT of a user who arrived on schedule (`null` without `dueAt`). */
    ttftFromDue: number | null;
    /** End − due, ms: the E2E of a user who arrived on schedule (`null` without `dueAt`, or for a failed call). */
    e2eFromDue: number | null;
    /** With `prices`: what the call cost; else `null`. */
    cost: Cost | null;
    /** The request body's size in bytes (images included; 0 for a GET stream). */
    requestBytes: number;
    /** The call's turn in a live conversation (1 for the first); `null` for a call that is not one. */
    turn: number | null;
  }

  /** One endpoint; create it in the init context and share it across iterations. */
  export class Client {
    constructor(options: ClientOptions);
    /**
     * Streams one answer. `body` is the provider's request object (or a JSON string), passed
     * through except the streaming flags the protocol needs. Resolves (never rejects, unless
     * k6's `throw` option is on) with the result.
     */
    chat(body: object | string | null, params?: CallParams): Promise<ChatResult>;
    /**
     * One embeddings call (not streamed): through the same transport, timeouts, retries,
     * fallback, tags and SLO as `chat`. Resolves (never rejects, unless k6's `throw` option is
     * on) with the result; the vectors are counted, not kept, unless `keepVectors`.
     */
    embed(body: EmbedBody, params?: RetrievalParams): Promise<RetrievalResult>;
    /** One rerank call (not streamed): scores `documents` against `query`, best first. */
    rerank(body: RerankBody, params?: RetrievalParams): Promise<RetrievalResult>;
    /**
     * A live conversation: each `say()` is a chat call whose history is what the server answered
     * on the turns before. Create it in the VU context; it lives in that VU.
     */
    conversation(options?: ConversationOptions): Conversation;
    /**
     * An agent: each `run(task)` is one job, a live conversation (job kind `agent`) that loops
     * model → tool calls → tool results → model until the model answers without calling a tool,
     * a tool fails or `maxSteps` is reached. Create it in the init context or the VU's.
     */
    agent(options: AgentOptions): Agent;
  }

  /** `client.agent(options)`: a conversation's options (no `think` or `pace`) and the tools. */
  export type AgentOptions = Omit<ConversationOptions, "think" | "pace"> & AgentLoopOptions;

  /** What `client.agent` takes besides a conversation's options. */
  export interface AgentLoopOptions {
    /** The tools the model may call, by name. */
    tools: Record<string, AgentToolFunction | AgentTool>;
    /** Model calls at most in one job (default 10): a model still calling tools at the last one fails the job (`step_limit`). */
    maxSteps?: number;
    /** A call of an unknown tool or with arguments that are not a JSON object: `report` (default: a finding, and the model is told) or `fail` (`bad_tool_call`). */
    badCalls?: "report" | "fail";
  }

  /** A tool as a function: the call's parsed arguments and the call; a non-string result goes back as JSON. A throw or a rejection fails the job. */
  export type AgentToolFunction = (
    args: Record<string, any>,
    call: { id: string; name: string; arguments: string },
  ) => unknown | Promise<unknown>;

  /** A tool with its declaration, or a canned result. */
  export interface AgentTool {
    /** The function that runs the tool (or `result`). */
    run?: AgentToolFunction;
    /** A canned result (or `run`): returned after `latency`. */
    result?: unknown;
    /** How long the canned result takes (default 0). */
    latency?: Duration;
    /**
     * The tool's own time at most: past it the job fails with `tool_timeout` (a promise no longer
     * awaited, a canned latency cut; a synchronous function cannot be stopped and is judged when it returns).
     */
    timeout?: Duration;
    /** Sent to the model with the tool's name. */
    description?: string;
    /** The JSON schema of the arguments, sent to the model (default: any object). */
    parameters?: Record<string, unknown>;
  }

  export interface Agent {
    /** One job: the task is the user's text or a dataset item. Resolves with its figures. */
    run(task: string | DatasetItem): Promise<AgentJob>;
  }

  /** `agent.run()`'s result: the job figures, the answer, the bad calls and the error. */
  export type AgentJob = JobResult & AgentJobFields;

  export interface AgentJobFields {
    /** The final answer's text; `null` when the job failed. */
    text: string | null;
    /** Tool rounds run (steps that asked for tools). */
    rounds: number;
    /** Each tool call that ran: the step that asked for it, its own time (ms) and whether it returned. */
    toolCalls: { step: number; id: string; name: string; time: number; ok: boolean }[];
    /** Calls the model got wrong; the job went on. */
    findings: AgentFinding[];
    /** Why the job failed: a tool's error, the step limit, a bad call (`badCalls: 'fail'`) or a model call's error type; `null` when it did not. */
    error: { type: "tool_error" | "tool_timeout" | "step_limit" | "bad_tool_call" | ErrorType; message: string; tool: string | null } | null;
  }

  /** A call the model got wrong. */
  export interface AgentFinding {
    kind: "unknown_tool" | "malformed_arguments";
    /** The model call (1-based) that made it. */
    step: number;
    tool: string;
    /** The arguments as the model sent them. */
    arguments: string;
    /** What the model was told. */
    message: string;
  }

  /** A think-time distribution: a duration is a fixed pause. */
  export type ThinkTime =
    | Duration
    | { dist?: "fixed"; median: Duration }
    | { dist: "uniform"; min: Duration; max: Duration }
    | { dist: "lognormal"; median: Duration; sigma: number };

  /** `client.conversation(options)`. */
  export interface ConversationOptions {
    /** The system prompt, in each protocol's own field. */
    system?: string;
    /** Body fields of every turn (model, temperature, max_tokens…); not the history's own fields. */
    body?: object;
    /** chat params of every turn (tags, headers, timeouts, onEvent…); a turn's own params merge over them. */
    params?: Omit<CallParams, "item">;
    /** The user's pause before each turn after the first, waited outside every call. */
    think?: ThinkTime;
    /** User-centric timing instead of think: `users` users together sending `rate` turns/s, each one every users/rate s. */
    pace?: { users: number; rate: number };
    /** Where the conversation's session key goes (at least one of header, body, cookie, routerHeader). */
    session?: {
      header?: string | string[];
      body?: "user" | "prompt_cache_key" | "session_id" | string;
      cookie?: string;
      /** Default: a fresh random key per conversation. */
      key?: string;
      /** A response header whose value (from the first answer that has it) is sent back on later turns. */
      routerHeader?: string;
    };
    /**
     * Keep only the last `maxTurns` turns, or drop the oldest while over `maxTokens` (client tokenizer).
     * `chain` (openai-responses, no cap): each turn sends only its new input and the previous answer's
     * id as previous_response_id; the server keeps the conversation.
     */
    history?: { maxTurns?: number; maxTokens?: number; chain?: boolean };
    /**
     * What an answer's reasoning becomes in the history (default "drop"). "send": openai-chat and
     * ollama as a field; anthropic as its signed thinking/redacted_thinking blocks; gemini as its
     * thought parts and thoughtSignatures; openai-responses as its reasoning items, whole.
     */
    reasoning?: "drop" | "send";
    /** openai-chat: the assistant field reasoning goes back in (default "reasoning_content"). */
    reasoningField?: string;
    /** The category tag of every turn and of the job's figures. */
    category?: string;
  }

  /** `conv.say(turn, params)`: this turn's chat params, and `body` for this turn's body fields. */
  export type SayParams = Omit<CallParams, "item"> & { body?: object };

  /** One message of `conv.history()`. */
  export interface HistoryMessage {
    role: "user" | "assistant" | "tool";
    text: string;
    /** The answer's reasoning as it streamed (kept whatever the policy; sent back with `reasoning: 'send'`). */
    reasoning: string;
    /**
     * The answer's signed reasoning as it streamed: Anthropic `thinking` (its text and signature) and
     * `redacted_thinking` (its data), Gemini `thought`/`text`/`call` thoughtSignatures (`call`: the tool
     * call's index), a Responses reasoning `item` (the item's JSON).
     */
    thoughts: { kind: "thinking" | "redacted_thinking" | "thought" | "text" | "call" | "item"; signature: string; text: string; call: number }[];
    toolCalls: { id: string; name: string; arguments: string }[];
    results: { id: string; name: string; content: string }[];
  }

  export interface Conversation {
    /** The session key sent on every turn ("" without `session`). */
    readonly session: string;
    /**
     * The user's next turn: their text, or a dataset item (its last user message; its `maxTokens`
     * unless the body sets one). Resolves with the chat result, or `null` once the conversation is
     * over (a turn failed, or the test is stopping): a failed turn ends it.
     */
    say(turn: string | DatasetItem, params?: SayParams): Promise<ChatResult | null>;
    /** The messages as kept (after the history cap). */
    history(): HistoryMessage[];
    /** Ends the conversation: its job figures go to k6 once and come back. */
    end(): JobResult;
  }

  /** A conversation's or agent job's figures (`conv.end()`). Times in ms; `null` when unknown. */
  export interface JobResult {
    kind: "conversation" | "agent";
    /** False when a turn failed. */
    ok: boolean;
    /** Why the job ended by itself (the failed turn's error type), `null` when the script ended it. */
    endReason: ErrorType | string | null;
    /** First send to the last answer's end (`null` when no turn was sent). */
    duration: number | null;
    /** The calls' own time, retries included. */
    modelTime: number | null;
    /** Pauses waited between turns. */
    thinkTime: number | null;
    /** Tools' run time (agent jobs). */
    toolTime: number | null;
    /** User turns sent. */
    turns: number;
    /** Model calls made (a conversation's turns; an agent's steps). */
    steps: number;
    /** An agent's calls of an unknown tool or with malformed arguments; `null` for a conversation. */
    badToolCalls: number | null;
    /** Prompt tokens the server counted over every call; `null` when a call had no count. */
    tokensIn: number | null;
    tokensOut: number;
    /** Each call's TTFT in order. */
    ttftByTurn: (number | null)[];
  }

  /** The embeddings wire formats `client.embed` speaks (default: the client protocol's servers'). */
  export type EmbedAPI = "openai" | "ollama" | "tei" | "gemini";

  /** `client.embed(body)`. */
  export interface EmbedBody {
    /** One text, or a batch of texts (one vector each). */
    input: string | string[];
    /** The model (default: the client's). */
    model?: string;
    /** `float` or `base64` (OpenAI's `encoding_format`; default: the server's, float). */
    encodingFormat?: "float" | "base64";
    /** Vector length, for models that can shorten theirs (left out: the model's own; 0 is refused). */
    dimensions?: number;
    /** Keep the vectors' values in `result.vectors` (default false: counted only). */
    keepVectors?: boolean;
    /** The wire format: `openai` (`/v1/embeddings`; vLLM, TEI, Ollama's `/v1`), `ollama` (`/api/embed`), `tei` (`/embed`), `gemini` (`embedContent`, `batchEmbedContents`). */
    api?: EmbedAPI;
    /** More body fields sent as they are (`truncate`, `user`, Gemini's `taskType`…). */
    extra?: Record<string, unknown>;
  }

  /** `client.rerank(body)`. */
  export interface RerankBody {
    query: string;
    documents: string[];
    /** The best N only (left out: every document's score; 0 is refused). */
    topN?: number;
    /** Ask the server to echo the documents' text. */
    returnDocuments?: boolean;
    model?: string;
    /** `cohere` (`/v1/rerank`, the shape vLLM, Cohere and Jina share; default) or `tei` (`/rerank`). */
    api?: "cohere" | "tei";
    extra?: Record<string, unknown>;
  }

  /** `client.embed` / `client.rerank` params: as `chat`'s, without `onEvent` and `gaps`. */
  export type RetrievalParams = Omit<CallParams, "onEvent" | "gaps">;

  /** One attempt of an embed or rerank call (times in ms, null when not measured). */
  export interface RetrievalAttempt {
    route: "primary" | "fallback";
    servedBy: string;
    ok: boolean;
    status: number;
    error: { type: ErrorType; message: string } | null;
    ttfb: number | null;
    duration: number | null;
  }

  /** What `client.embed` and `client.rerank` resolve with: `ok` tells the two shapes apart, as for chat. */
  export type RetrievalResult = RetrievalResultFields &
    ({ ok: true; error: null } | { ok: false; error: ChatError });

  /** The fields every embed or rerank result has. Times in ms; `null` when not measured. */
  export interface RetrievalResultFields {
    /** HTTP status of the final attempt (0 when no response came). */
    status: number;
    op: "embed" | "rerank";
    /** The wire format spoken. */
    api: string;
    /** Vectors (embed) or scored documents (rerank) returned. */
    count: number;
    /** The vectors' length; `null` for rerank or without vectors. */
    dimension: number | null;
    /** The vectors, only with `keepVectors`. */
    vectors: number[][] | null;
    /** Rerank: the documents' indexes and scores, best first; `null` for embed or a failed call. */
    results: { index: number; score: number }[] | null;
    /** Rerank: the API has no top-N field, so the client cut the answer (the server scored every document). */
    clientTopN: boolean;
    /** Inputs embedded, or documents reranked; `null` for a failed call. */
    batchSize: number | null;
    /** The inputs' tokens (rerank: query and document of every pair); `null` when nobody counted them, or for a failed call. */
    inputTokens: number | null;
    /** `usage` (the server's count) or `tokenizer` (the client's); "" when unknown. */
    tokenSource: string;
    /** `inputTokens` over `duration`. */
    inputTokensPerSec: number | null;
    /** Request sent → response headers (a non-streamed server sends them when the answer is ready). */
    ttfb: number | null;
    /** Request sent → the answer's last byte; `null` for a failed call. */
    duration: number | null;
    /** The client's time reading the answer, after `duration` (never part of it). */
    clientParseTime: number | null;
    /** When the call's schedule credit was due, ms since the epoch: the first call after `Schedule.next()` is its send (`null` otherwise). */
    dueAt: number | null;
    /** Send − due, ms: how late this load generator sent the call (`null` without `dueAt`). */
    dispatchDelay: number | null;
    /** End − due, ms: `duration` of a user who arrived on schedule (`null` without `dueAt` or for a failed call; no TTFT from it: no first token). */
    e2eFromDue: number | null;
    requestBytes: number;
    /** `null` when no response came. */
    responseBytes: number | null;
    model: string;
    retries: number;
    attempts: RetrievalAttempt[];
    servedBy: string;
    route: "primary" | "fallback";
    requestId: string;
    traceId: string | null;
    serverTimings: Record<string, number> | null;
    proto: string;
    clientLag: number | null;
  }

  // ---- Dataset ----

  /** A length in tokens: exactly `n`, `[min, max]` or `{min, max}`. */
  export type TokenRange = number | [number, number] | { min: number; max: number };

  /** A synthetic category: built-in (`short`, `medium`, `long_context`, `long_output`) or new. */
  export interface CategorySpec {
    prompt?: TokenRange;
    maxTokens?: TokenRange;
    weight?: number;
    /** Distinct items of this category (above 0). */
    variants?: number;
    /** Picked from the lengths when absent. */
    style?: "question" | "task" | "document" | "essay";
  }

  /** `Dataset.synthetic(options)`. */
  export interface SyntheticOptions {
    /** Same seed and options, same items on every machine (default 0). */
    seed?: number;
    /** Weight of each category drawn (default `{short: 3, medium: 5, long_context: 1, long_output: 1}`). */
    mix?: Record<string, number>;
    /** Override a built-in category or add one. */
    categories?: Record<string, CategorySpec>;
    /** Tokenizer the prompt lengths are exact for (default "o200k_base"). */
    tokenizer?: Tokenizer;
    /** Distinct items per category (default 32; 0 is refused). */
    variants?: number;
    /** A cache scenario: `count` prefixes of `tokens` tokens start `fraction` of the items. */
    sharedPrefix?: { count?: number; tokens?: number; fraction?: number };
    /** A unique nonce first in every draw (defeats prompt caches). */
    cacheBust?: boolean;
    /** Multi-turn conversations of min..max turns. */
    turns?: TokenRange;
    /** Pictures on the last user turn of each item, made on every draw. */
    images?: ImageOptions;
  }

  /** A pixel count: exactly `n`, `[min, max]` or `{min, max}`, drawn per image. */
  export type PixelRange = number | [number, number] | { min: number; max: number };

  /**
   * `images` of `Dataset.synthetic` and `Dataset.load`. Synthetic images are seeded gradients whose
   * pixels differ on every draw (no multimodal cache can short-cut them) unless `repeat` is set.
   */
  export interface ImageOptions {
    /** Images per turn (default 1; 0 is refused). */
    count?: number;
    /** Pixels (default 512). */
    width?: PixelRange;
    height?: PixelRange;
    /** Default "jpeg". */
    format?: "jpeg" | "png";
    /** JPEG quality 1-100 (default 85; 0 is refused). */
    quality?: number;
    /** The same image on every draw of an item (to measure a multimodal cache on purpose). */
    repeat?: boolean;
    /** Share of the items that get images, in (0, 1] (default all; 0 is refused), chosen per item. */
    fraction?: number;
    /** Init context: a folder whose PNG, JPEG, GIF and WebP files are sent in turn instead. */
    dir?: string;
    /** Image files sent in turn instead (carried by `k6 archive`, unlike a folder listing). */
    files?: string[];
  }

  /** A rule putting a loaded prompt in a category (tried in order). */
  export interface Bucket {
    name: string;
    /** Prompt tokens, `[min, max]` (max 0 = no limit). */
    prompt?: TokenRange;
    /** Only prompts whose reference answer has at least this many tokens. */
    minOutputTokens?: number;
    /** `maxTokens` for items of this bucket without their own. */
    maxTokens?: number;
  }

  /** `Dataset.load(path, options)`. */
  export interface LoadOptions {
    /** Default: from the file name (.jsonl, .json = ShareGPT, .txt). */
    format?: "jsonl" | "sharegpt" | "text";
    tokenizer?: Tokenizer;
    /** Mask e-mail addresses, phone and card numbers and API-key-like strings. */
    scrub?: boolean;
    buckets?: Bucket[];
    /** Category weights (default: in proportion to each category's items). */
    mix?: Record<string, number>;
    minPromptTokens?: number;
    maxPromptTokens?: number;
    /** ShareGPT: the first user turn (default) or every turn with its history. */
    turns?: "first" | "all";
    /** Keep the first `limit` items (after a seeded shuffle); left out: all (0 is refused). */
    limit?: number;
    shuffle?: boolean;
    seed?: number;
    cacheBust?: boolean;
    /** Pictures on the last user turn of each item. */
    images?: ImageOptions;
  }

  /** One prompt, a fresh plain object per draw. */
  export interface DatasetItem {
    /** e.g. "medium-012", "medium-012#3" (turn 3), "prompts.jsonl:17". */
    id: string;
    category: string;
    /** OpenAI chat messages, ready for `client.chat({messages})`. */
    messages: { role: string; content: string }[];
    /** The last user message. */
    prompt: string;
    /** Tokens of all message contents with the dataset's tokenizer. */
    promptTokens: number;
    /** The class's output length, for `max_tokens`. */
    maxTokens: number;
    /** Turn number (1 for single prompts). */
    turn: number;
    conversation: string;
    /** The item starts with a shared prefix. */
    sharedPrefix: boolean;
    prefixTokens: number;
    /** The draw starts with a unique nonce. */
    cacheBust: boolean;
    /** Pictures for the last user turn (`images` option); `client.chat(body, {item})` attaches them in the client's protocol. */
    images: DatasetImage[];
  }

  /** One picture of a drawn item. */
  export interface DatasetImage {
    mime: string;
    /** Pixels; 0 when the file's format is one Go does not read (WebP). */
    width: number;
    height: number;
    /** Encoded size. */
    bytes: number;
    /** The file it came from ("" for a synthetic image). */
    file: string;
    /** The image, base64. */
    data: string;
  }

  /** What `info()` says about a category. */
  export interface CategoryInfo {
    name: string;
    items: number;
    weight: number;
    share: number;
    minPromptTokens: number;
    maxPromptTokens: number;
    meanPromptTokens: number;
    minMaxTokens: number;
    maxMaxTokens: number;
  }

  /** What `info()` says about a dataset. */
  export interface DatasetInfo {
    name: string;
    tokenizer: string;
    items: number;
    categories: CategoryInfo[];
    /** Records a loader skipped, by reason. */
    skipped: Record<string, number>;
    /** Values scrubbing masked, by kind. */
    scrubbed: Record<string, number>;
    sharedPrefixItems: number;
    cacheBust: boolean;
    /** Draws so far in this process (this instance's part of a split test). */
    draws: number;
    /** In a VU: the part of the dataset this instance draws when the test is split by execution segment. */
    segment?: {
      segment: string;
      sequence: string;
      fraction: number;
      /** Distinct items this instance draws from. */
      items: number;
      /** Categories too small to split, drawn whole by every instance. */
      unsplit: string[];
    };
  }

  /** A prompt set shared by every VU of the process, drawn in exact proportions. */
  export interface Dataset {
    /**
     * The next draw of the process-wide sequence. In an iteration of a test split across k6 instances,
     * the whole test's draw `exec.scenario.iterationInTest` (the instances together draw each item once,
     * whatever the executor and VU split); further draws in the same iteration continue from it and can
     * repeat later iterations' items (warned once), and each scenario numbers its iterations from 0.
     */
    next(): DatasetItem;
    /** Draw number `n`, without advancing (reproducible: key it on `exec.scenario.iterationInInstance`). */
    draw(n: number): DatasetItem;
    /**
     * The whole test's draw `n`, whatever this instance's share: key it on an index unique across
     * instances (`exec.scenario.iterationInTest`, a schedule credit's `seq`) and the instances together
     * draw exactly what one instance would, item for item, whatever the executor and VU split.
     */
    drawInTest(n: number): DatasetItem;
    /** Item `i` (modulo size). */
    at(i: number): DatasetItem;
    /** Distinct items. */
    size(): number;
    /** Categories drawn. */
    categories(): string[];
    info(): DatasetInfo;
  }

  /** `Dataset.chunks(options)`: document chunks for `client.embed`. */
  export interface ChunkOptions {
    seed?: number;
    /** Tokens of each chunk (default 256). */
    tokens?: TokenRange;
    /** Distinct chunks (default 256; 0 is refused). */
    count?: number;
    /** Batch sizes and their weights, e.g. `{ '1': 8, '32': 1 }` (default batches of 1). */
    batch?: Record<string, number>;
    tokenizer?: Tokenizer;
    /** Init context: text files cut into the chunks instead of synthetic prose. */
    files?: string[];
  }

  /** One draw of `Dataset.chunks`: the inputs of one embeddings call. */
  export interface ChunkBatch {
    inputs: string[];
    /** Tokens of each input with the chunks' tokenizer. */
    tokens: number[];
    totalTokens: number;
    /** "batch_<size>", for the call's category tag. */
    category: string;
  }

  export interface Chunks {
    next(): ChunkBatch;
    draw(n: number): ChunkBatch;
    /** Distinct chunks. */
    size(): number;
    info(): { chunks: number; tokenizer: string; batchShares: Record<string, number>; draws: number };
  }

  /** `Dataset.rerank(options)`: queries with documents for `client.rerank`. */
  export interface RerankOptions {
    seed?: number;
    /** Distinct queries (default 64; 0 is refused). */
    queries?: number;
    /** Documents per query (default 16). */
    documents?: TokenRange;
    /** Default 16. */
    queryTokens?: TokenRange;
    /** Default 128. */
    documentTokens?: TokenRange;
    /** Sent with every query (default none: every score; 0 is refused). */
    topN?: number;
    tokenizer?: Tokenizer;
  }

  /** One draw of `Dataset.rerank`. */
  export interface RerankQuery {
    id: string;
    query: string;
    queryTokens: number;
    documents: string[];
    documentTokens: number[];
    topN: number;
    /** "docs_<count>". */
    category: string;
  }

  export interface RerankSet {
    next(): RerankQuery;
    draw(n: number): RerankQuery;
    size(): number;
  }

  export const Dataset: {
    /** Readable made-up prompts by length class, token counts exact for the tokenizer. */
    synthetic(options?: SyntheticOptions): Dataset;
    /** Init context only: reads a JSON-lines, ShareGPT or text file through k6's file system (carried by `k6 archive`). */
    load(path: string, options?: LoadOptions): Dataset;
    /** Document chunks of exact token lengths, drawn in batches whose sizes follow a mix. */
    chunks(options?: ChunkOptions): Chunks;
    /** Queries with documents of exact token lengths. */
    rerank(options?: RerankOptions): RerankSet;
  };

  // ---- Arrivals ----

  /** Options of `Arrivals.poisson` / `Arrivals.bursty`. */
  export interface ArrivalOptions {
    /** Requests per second of the whole test (split across instances by execution segment). */
    rate: number;
    /** Coefficient of variation of the gaps (poisson: always 1; bursty default 3; 0 is refused). */
    cv?: number;
    seed?: number;
    /** Two processes with equal options but different names stay apart. */
    name?: string;
  }

  /** A process-wide arrival schedule: every VU claims the next arrival. */
  export interface Arrivals {
    /** Claims the next arrival: seconds to `sleep()` before sending it. */
    next(): number;
    /** Arrival times (seconds from the start) within `seconds`. */
    offsets(seconds: number): number[];
    /** Whether the VUs kept up: arrivals claimed, claimed late, the worst lag, the configured rate and cv,
     * and the execution segment and share of the arrivals this instance runs. */
    stats(): { claimed: number; late: number; maxLagMs: number; rate: number; cv: number; segment: string; share: number };
  }

  export const Arrivals: {
    /** Open-model arrivals with exponential gaps. */
    poisson(options: ArrivalOptions): Arrivals;
    /** Arrivals in bursts: gaps with the given cv (default 3). */
    bursty(options: ArrivalOptions): Arrivals;
  };

  // ---- Schedule ----

  /** Options of `Schedule.constant` / `Schedule.poisson` / `Schedule.gamma`. */
  export interface ScheduleOptions {
    /** Credits per second of the whole test (split across instances by execution segment). */
    rate: number;
    /** The schedule's length (`'60s'` or ms): no credit is due after it. Required. */
    duration: Duration;
    /** Gamma only: coefficient of variation of the gaps (default 3; 1 = Poisson; 0 is refused). */
    cv?: number;
    seed?: number;
    /** Two schedules with equal options but different names stay apart. */
    name?: string;
  }

  /** Options of `Schedule.trace(path, options)`. */
  export interface TraceOptions {
    /** `'auto'` (default: from the first line), `'mooncake'`, `'bailian'`, `'burstgpt'` or `'azure'`. */
    format?: 'auto' | 'mooncake' | 'bailian' | 'burstgpt' | 'azure';
    /** Tokens per hash id (default: Mooncake 512, Bailian 16; 0 is refused). */
    blockSize?: number;
    /** The one time knob, a rate multiplier: 2 replays twice as fast (default 1; 0 is refused). */
    rateScale?: number;
    /** Seconds into the trace where the replay starts (trace time). */
    start?: number;
    /** Seconds of trace time replayed from `start` (default: to the end; 0 is refused). */
    duration?: number;
    /** At most this many rows (default: all; 0 is refused). */
    maxRows?: number;
    /** Start the trace again after its last row, until `loopFor`. */
    loop?: boolean;
    loopFor?: Duration;
    /** BurstGPT: replay failed requests (0 response tokens) too, with `max_tokens: 1`. */
    keepFailed?: boolean;
    /** Seed of the prompt text. */
    seed?: number;
    /** Encoding that counts the prompts' tokens (default `o200k_base`): the server's, ideally. */
    tokenizer?: string;
    /** Also send `min_tokens` and `ignore_eos` (vLLM, llm-sim) so the output is the trace's length. */
    exactOutput?: boolean;
    /**
     * Read the file straight from the disk, streamed, instead of through k6's file system, which keeps the
     * whole text in memory for the run: for large traces. `k6 archive`, k6 Cloud and k6-operator do not carry a
     * file read this way: it must be where the test runs (same path, relative to the script).
     */
    fromDisk?: boolean;
  }

  /** What `Schedule.next()` returns: one send, due at `dueAt`. */
  export interface Credit {
    /** Its index in the whole test's schedule (all instances). */
    seq: number;
    /** When it was due, ms since the epoch. */
    dueAt: number;
    /** When it was due, seconds from the schedule's start. */
    offset: number;
    /** How late it was handed out, ms (0: a VU was waiting for it). */
    lag: number;
    /** Trace schedules: the row, its lengths and a request body built to them. */
    row?: number;
    inputTokens?: number;
    outputTokens?: number;
    body?: TraceBody;
  }

  /** The request a trace row asks for: its prompt built to the row's length (shared blocks shared), its output length. */
  export interface TraceBody {
    messages: { role: 'user'; content: string }[];
    max_tokens: number;
    min_tokens?: number;
    ignore_eos?: boolean;
  }

  /** How the VUs kept up with a schedule. */
  export interface ScheduleStats {
    kind: 'constant' | 'poisson' | 'gamma' | 'trace';
    /** Credits handed out, of them late by more than 1 ms, and the worst and mean lag. */
    claimed: number;
    late: number;
    maxLagMs: number;
    meanLagMs: number;
    /** Credits that were due (before the test stopped) but never sent: failed calls of error type `dropped`
     * in the report and in `llm_requests`/`llm_failed` (a late credit is not dropped). */
    dropped: number;
    /** Every credit was handed out. */
    over: boolean;
    /** The rate now (credits/s; a trace's rateScale). */
    rate: number;
    /** The execution segment and the share of the credits this instance runs. */
    segment: string;
    share: number;
  }

  /** What a trace schedule replays. */
  export interface TraceInfo {
    format: string;
    rows: number;
    /** BurstGPT failures left out; rows outside the window. */
    skipped: number;
    outside: number;
    /** Bailian rows that continue a conversation (turn > 1). */
    turns: number;
    /** Seconds from the first row to the last, and the mean rate, at `rateScale`. */
    span: number;
    meanRate: number;
    blockSize: number;
    /** The share of prompt tokens an infinite prefix cache would reuse, by the trace's hash ids; `null` without them. */
    prefixReuse: number | null;
    /** The line printed when the trace was read. */
    summary: string;
  }

  /** One schedule of credits for the whole test, shared by every VU of a pool. */
  export interface Schedule {
    /** Sleeps until this instance's next credit is due and returns it; `null` when the schedule is over. */
    next(): Credit | null;
    /** Changes the rate (credits/s; a trace's rateScale) from `at` seconds after the start (default: now). Returns the offset it took effect at. */
    setRate(rate: number, at?: number): number;
    stats(): ScheduleStats;
    /** Trace schedules: what is replayed; `null` for synthetic ones. */
    info(): TraceInfo | null;
  }

  export const Schedule: {
    /** Evenly spaced credits. */
    constant(options: ScheduleOptions): Schedule;
    /** Random arrivals (exponential gaps), seeded. */
    poisson(options: ScheduleOptions): Schedule;
    /** Bursty arrivals: gamma gaps with coefficient of variation `cv` (default 3). */
    gamma(options: ScheduleOptions): Schedule;
    /** A production trace replayed on its timestamps (init context); `path` is relative to the script, as for `open()`. */
    trace(path: string, options?: TraceOptions): Schedule;
  };

  // ---- Capacity ----

  /** Objectives of a capacity search, as k6 thresholds read: `'p95<2s'`, `'p99<30000'` (ms), errors `'<1%'`. */
  export interface CapacitySLO {
    ttft?: string;
    tpot?: string;
    e2e?: string;
    errors?: string;
  }

  /** Options of `Capacity.search`: `rate` (open model) or `concurrency` (closed model), and the objectives. */
  export interface CapacityOptions {
    /** The objectives every call counts toward (only `client`'s calls when given). */
    slo?: CapacitySLO;
    client?: Client;
    /** Objectives per client: each judges only that client's calls. */
    clients?: { client: Client; slo: CapacitySLO }[];
    /** Open model: requests per second of the whole test, searched between min and max. */
    rate?: { min: number; max: number };
    /** Closed model: calls in flight (whole numbers), searched between min and max. */
    concurrency?: { min: number; max: number };
    /** A window's planned length (default `'20s'`, at least `'3s'` and twice the longest limit after the warm-up). */
    window?: Duration;
    /** The start of each window left out of its figures (default a fifth of the window). */
    warmup?: Duration;
    /**
     * The longest a window is lengthened to (by half a window at a time) while its calls cannot decide; still
     * undecided then, it counts as a fail that says so. Default four windows, or, for the open model, long
     * enough to measure at rate.min half again the calls a pass needs (59 for a p95, 299 for a p99 or errors <1%),
     * both times cv² under bursty arrivals (their windows need cv² times the calls: 4× at cv 2).
     */
    maxWindow?: Duration;
    /** The window that confirms the answer in steady state before it is given (default three windows, at least `'60s'`). */
    sustain?: Duration;
    /** Refining stops when the bracket is this narrow relative to its low end (default 0.05). */
    precision?: number;
    /** The share of the capacity recommended for production (default 0.8). */
    share?: number;
    /** The search's budget of windows, sustain windows included (default 16). */
    maxWindows?: number;
    /** Open model: `'poisson'` (default), `'constant'` or `'bursty'` (gamma gaps) arrivals, and their seed. */
    arrivals?: 'poisson' | 'constant' | 'bursty';
    /** Bursty arrivals' gaps' coefficient of variation (default 3, as `Arrivals.bursty`). */
    cv?: number;
    seed?: number;
    /**
     * Open model: a trace's arrivals instead (`Schedule.trace(path, options)` without rateScale or loop),
     * its time scaled so its mean rate is the level; each turn carries the row's request.
     */
    trace?: Schedule;
  }

  /** What `next()` returns: the VU's turn at the search's current level. */
  export interface CapacityTurn {
    level: number;
    window: number;
    /** Open model: the credit taken (as `Schedule.next()`'s). */
    seq?: number;
    dueAt?: number;
    lag?: number;
  }

  /** A turn of a search replaying a trace: the credit's row and the request built to it (as `Schedule.trace`'s credits). */
  export interface CapacityTraceTurn extends CapacityTurn {
    seq: number;
    dueAt: number;
    lag: number;
    row: number;
    inputTokens: number;
    outputTokens: number;
    body: TraceBody;
  }

  /** A window's percentiles of one figure, ms (`null`: not measured). */
  export interface CapacityPercentiles {
    p50: number | null;
    p90: number | null;
    p95: number | null;
    p99: number | null;
  }

  /** One window of the search (docs/capacity.md). */
  export interface CapacityWindow {
    index: number;
    phase: 'bracket' | 'refine' | 'sustain';
    level: number;
    start_s: number;
    end_s: number;
    /** Seconds into the window when over-saturation ended it; `null` when it ran its length. */
    early_stop_s: number | null;
    verdict: 'pass' | 'fail';
    reason: string;
    settled: boolean;
    extended?: boolean;
    /** A fail that only says the calls could not decide at the longest window: the level may hold. */
    undecided?: boolean;
    /** A pass whose random arrivals came well under its level: the rate they came at, which the pass speaks for. */
    carried?: number;
    margin: number;
    /**
     * Each objective's figure and the one-sided 95 % bounds that decided it (`null`: the calls cannot bound
     * that side), with the calls it rests on (censored: unfinished, or failed before the figure).
     */
    margins: {
      objective: string;
      observed: number | null;
      margin: number;
      lower: number | null;
      upper: number | null;
      verdict?: 'pass' | 'fail' | 'undecided';
      calls: number;
      censored?: number;
    }[];
    calls: number;
    failed: number;
    censored: number;
    ttft_ms: CapacityPercentiles;
    tpot_ms: CapacityPercentiles;
    e2e_ms: CapacityPercentiles;
    throughput: number | null;
    goodput: number | null;
    goodput_ratio: number | null;
    output_tokens_per_s: number | null;
    /**
     * The GPUs' energy over the window's measured span, from the serverMetrics GPU exporters (absent without one):
     * joules, average power, and per output token and per request the engines counted (`null`: unknown).
     */
    energy?: {
      joules: number | null;
      avg_power_w: number | null;
      j_per_output_token: number | null;
      j_per_request: number | null;
      unattributed?: string;
    };
  }

  /** The search's answer: the run record's `capacity` section. */
  export interface CapacityResult {
    model: 'rate' | 'concurrency';
    unit: string;
    min: number;
    max: number;
    window_s: number;
    warmup_s: number;
    max_window_s?: number;
    sustain_s?: number;
    precision: number;
    share: number;
    /** Open model: the arrival process (none with a trace) and its gaps' coefficient of variation. */
    arrivals?: 'poisson' | 'constant' | 'bursty';
    cv?: number;
    method: string;
    objectives: { text: string; client?: string; figure: string; quantile?: number; limit: number }[];
    outcome: 'found' | 'below_min' | 'above_max' | 'unfinished';
    capacity: number | null;
    last_pass: number | null;
    first_fail: number | null;
    binding_objective?: string;
    boundary?: 'smooth' | 'cliff';
    recommended: number | null;
    /** How sure each window's verdict is (0.95). */
    confidence?: number;
    /** How long the answer held in its sustain window, seconds (`null`: not sustained, as when unfinished). */
    sustained_s: number | null;
    /** Levels above the answer that could not decide (counted as fails): the capacity may be higher. */
    undecided_above?: number[];
    segment?: string;
    /** The trace the arrivals replayed: each level is also a speed of its recording (level / mean_rate). */
    trace?: {
      name: string;
      rows: number;
      /** req/s as recorded. */
      mean_rate: number;
      /** capacity and recommended as time multipliers of the recording (null with them). */
      scale: number | null;
      recommended_scale: number | null;
    };
    windows: CapacityWindow[];
  }

  /** A capacity search driving an ordinary k6 scenario (a per-vu-iterations loop of turns, or a constant-vus pool). */
  export interface CapacitySearch<Turn extends CapacityTurn = CapacityTurn> {
    /** Waits for this VU's turn at the current level; `null` once the answer is known or the scenario's time is up (at once the first time; a later call holds the VU until the scenario's time is up). */
    next(): Turn | null;
    /** The answer so far. */
    result(): CapacityResult;
    /** The longest the search can take (`'360s'`): the scenario's duration or maxDuration. */
    maxDuration(): string;
    model(): 'rate' | 'concurrency';
  }

  export const Capacity: {
    /** Builds the search (init context); `llm_capacity` (a Gauge) carries its answer. */
    search(options: CapacityOptions & { trace: Schedule }): CapacitySearch<CapacityTraceTurn>;
    search(options: CapacityOptions): CapacitySearch;
  };

  // ---- Precision gate ----

  /**
   * Targets of a precision gate: a duration figure the report keeps (`ttft`, `ttfb`, `tpot`, `e2e`…) and the
   * percentile with the margin it must be known to, `'p95±5%'` (a share of the estimate) or `'p99±200ms'`
   * (ASCII `+-` for `±`).
   */
  export type PrecisionTargets = Partial<Record<'ttft' | 'ttft_answer' | 'ttfb' | 'tpot' | 'e2e' | string, string>>;

  export interface PrecisionOptions {
    /** The longest the gate stays open from its first `next()` ('10m' or ms); without it, the scenario's duration ends the run. */
    cap?: string | number;
  }

  /** One target in the gate's verdict. Interval ends the calls cannot give are `null`. */
  export interface PrecisionTargetResult {
    target: string;
    figure: string;
    quantile: number;
    margin: number;
    relative: boolean;
    met: boolean;
    /** Seconds after the gate's first `next()` when the target was first met. */
    met_s: number | null;
    calls: number;
    estimate_ms: number | null;
    lo_ms: number | null;
    hi_ms: number | null;
  }

  /** The run record's `precision` section. */
  export interface PrecisionResult {
    outcome: 'met' | 'cap' | 'running';
    confidence: number;
    cap_s: number | null;
    ended_s: number | null;
    targets: PrecisionTargetResult[];
    segment?: string;
  }

  /** A gate a pool of VUs loops on: the run ends once every target is known to its margin, or at the cap. */
  export interface PrecisionGate {
    /** `{open: true}` while another call is wanted; `null` once the gate is closed (at once the first time; a later call holds the VU until the scenario's time is up). */
    next(): { open: true } | null;
    /** The verdict so far. */
    result(): PrecisionResult;
  }

  export const Precision: {
    /** Builds the process's gate (init context); every finished call of every client feeds it. */
    until(targets: PrecisionTargets, options?: PrecisionOptions): PrecisionGate;
  };

  // ---- Report ----

  /** `report(data, options)`. */
  export interface ReportOptions {
    /** Write the HTML report to this path. */
    html?: string;
    /** Write the JSON run record (a future baseline) to this path. */
    json?: string;
    /** A run record to compare with (default: the one `loadBaseline` loaded). */
    baseline?: string;
    title?: string;
    /** Stored in the record's metadata. */
    meta?: Record<string, unknown>;
    /** Print k6's summary plus the LLM section (default true). */
    stdout?: boolean;
    /** How long a load level must hold to be a stage ('10s' or ms); overrides collect()'s. */
    minStage?: string | number;
  }

  /** For handleSummary: k6's text summary plus the LLM section, and the files asked for. */
  export function report(data: object, options?: ReportOptions): Record<string, string>;

  /** `collect(options)`: what the report leaves out, set in the init context before any call. */
  export interface CollectOptions {
    /** Leave out calls started in the first part of the test ('30s' or ms). */
    warmup?: string | number;
    /** Leave out every call of these scenarios. */
    excludeScenarios?: string[];
    /** Leave out calls whose tag has this value, e.g. { phase: 'warmup' }. */
    excludeTags?: Record<string, string>;
    /** Keep the calls made in setup() and teardown() (left out by default). */
    keepSetup?: boolean;
    /** How long a load level must hold to be a stage (default: its mean call, at least 3 s). */
    minStage?: string | number;
  }

  /** Init context, top level: which calls the report leaves out (warm-up, scenarios, tags). */
  export function collect(options?: CollectOptions): {
    warmup: string; excludeScenarios?: string[]; excludeTags?: Record<string, string>; keepSetup: boolean;
  };

  /** Init context: a stored run record that drives llm_regression and the comparison. */
  export function loadBaseline(path: string): { path: string; categories: string[] };

  /** The module's version, e.g. "v0.1.0". */
  export const version: string;
}
