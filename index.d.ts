/**
 * k6/x/llmstream — load-test streaming LLM APIs with k6 and see where the time goes.
 * Types for editors (`// @ts-check` or TypeScript); the README has the full reference.
 */
declare module "k6/x/llmstream" {
  /** A duration: a k6/Go duration string ("3s", "250ms", "1m30s") or milliseconds. */
  export type Duration = string | number;

  export type Protocol =
    | "openai-chat" | "openai-completions" | "openai-responses" | "anthropic"
    | "ollama" | "gemini" | "tgi" | "llamacpp" | "sse";

  export type ErrorType =
    | "timeout_connect" | "timeout_first_token" | "timeout_idle" | "timeout_total"
    | "http_429" | "http_4xx" | "http_5xx" | "network" | "stream_error" | "decode"
    | "truncated" | "canceled";

  export interface Timeouts { connect?: Duration; firstToken?: Duration; idle?: Duration; total?: Duration }

  export interface ClientOptions {
    /** e.g. "http://127.0.0.1:8000/v1"; the protocol's path is appended. */
    baseURL: string;
    protocol?: Protocol;
    model?: string;
    /** Sent in the protocol's auth header; redacted from errors, results, logs and reports. */
    apiKey?: string;
    /** The `name` tag of llm_* and http_req_* samples. */
    name?: string;
    path?: string;
    headers?: Record<string, string>;
    tags?: Record<string, string>;
    timeouts?: Timeouts;
    /** llm_inter_token_gap samples: one per gap (default), one mean per request, or none. */
    gapSamples?: "event" | "request" | "off";
    stallThreshold?: Duration;
    /** llm_goodput is 1 for a successful call that met every objective given. */
    slo?: { ttft?: Duration; tpot?: Duration; e2e?: Duration };
    continuousUsage?: boolean;
    tokenizer?: "o200k_base" | "cl100k_base" | "p50k_base" | "r50k_base" | "none";
    maxEventSize?: number;
    maxBodySize?: number;
    retry?: {
      attempts?: number;
      on?: ErrorType[];
      backoff?: { base?: Duration; max?: Duration; jitter?: number };
      respectRetryAfter?: boolean;
      /** true sends Idempotency-Key; a string names the header. */
      idempotencyKey?: boolean | string;
      afterOutput?: boolean;
    };
    fallback?: Client;
    fallbackOn?: ErrorType[];
    /** Keep every gap in result.gaps. */
    gaps?: boolean;
    /** Protocol "sse" only: reopen a broken stream with Last-Event-ID. */
    reconnect?: { attempts?: number; delay?: Duration };
  }

  export interface StreamEvent { type: string; id: string; data: string; /** ms since the first event */ time: number }

  export interface CallParams {
    tags?: Record<string, string>;
    headers?: Record<string, string>;
    timeouts?: Timeouts;
    path?: string;
    gaps?: boolean;
    /** A dataset item: tags the call with its category and turn. */
    item?: DatasetItem;
    /** Runs on the event loop after the event was timestamped; never in the timing path. */
    onEvent?: (e: StreamEvent) => void;
  }

  export interface Usage {
    promptTokens: number; completionTokens: number; cachedTokens: number;
    reasoningTokens: number; totalTokens: number;
  }

  export interface ChatResult {
    ok: boolean;
    status: number;
    error: null | { type: ErrorType; message: string };
    text: string;
    reasoningText: string;
    toolCalls: { index: number; id: string; name: string; arguments: string }[];
    finishReason: string;
    usage: Usage | null;
    tokenSource: "usage_stream" | "usage" | "tokenizer" | "events";
    model: string;
    /** Times in ms; null when not measurable. */
    ttfb: number | null; ttft: number | null; ttftAnswer: number | null; e2e: number | null;
    tpot: number | null; tokensPerSec: number | null;
    clientParseTime: number; clientParseShare: number;
    chunks: number; outputTokens: number; stalls: number; retries: number; reconnects: number;
    servedBy: string; requestId: string; cache: "hit" | "miss" | "unknown";
    serverTimings: Record<string, number> | null;
    gaps: number[] | null;
  }

  export class Client {
    constructor(options: ClientOptions);
    /** Streams one answer. Resolves (never rejects, unless k6's `throw` is on) with the result. */
    chat(body: object | string | null, params?: CallParams): Promise<ChatResult>;
  }

  export interface DatasetItem {
    id: string; category: string; messages: { role: string; content: string }[]; prompt: string;
    promptTokens: number; maxTokens: number; turn: number; conversation: string;
    sharedPrefix: boolean; prefixTokens: number; cacheBust: boolean;
  }

  export interface Dataset {
    next(): DatasetItem;
    draw(n: number): DatasetItem;
    at(i: number): DatasetItem;
    size(): number;
    categories(): string[];
    info(): object;
  }

  export const Dataset: {
    synthetic(options?: object): Dataset;
    load(path: string, options?: object): Dataset;
  };

  export interface Arrivals {
    /** Seconds to sleep before the next request. */
    next(): number;
    offsets(seconds: number): number[];
    stats(): { claimed: number; late: number; maxLagMs: number; rate: number; cv: number };
  }

  export const Arrivals: {
    poisson(options: { rate: number; seed?: number }): Arrivals;
    bursty(options: { rate: number; cv?: number; seed?: number }): Arrivals;
  };

  /** For handleSummary: k6's text summary plus the LLM section, and the files asked for. */
  export function report(data: object, options?: {
    html?: string; json?: string; baseline?: string; title?: string; meta?: Record<string, unknown>; stdout?: boolean;
  }): Record<string, string>;

  /** Init context: a stored run record that drives llm_regression and the comparison. */
  export function loadBaseline(path: string): { path: string; categories: string[] };

  export const version: string;
}
