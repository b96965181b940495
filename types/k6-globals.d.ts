// k6's console, which @types/k6 leaves to the DOM library (not loaded here: k6 has no DOM).
declare var console: {
  log(...data: unknown[]): void;
  info(...data: unknown[]): void;
  warn(...data: unknown[]): void;
  error(...data: unknown[]): void;
  debug(...data: unknown[]): void;
};
