#!/usr/bin/env bash
# make accuracy: how far the k6 module's TTFT and gaps are from llm-sim's ground
# truth, with bench/bareclient as the floor, at several levels of concurrent
# streams (bench/accuracy; figures go in BENCHMARKS.md with this command).
# Expects ./k6 and ./llm-sim (make accuracy builds them); K6 and LLM_SIM point
# elsewhere. Knobs (environment): LEVELS (1,50,200,500,1000), SHAPES
# (staggered,uniform), CLIENTS (k6,bare), DURATION (15s per client and level),
# MIN_TOKENS (100), MAX_TOKENS (200), DECODE_MS (20), TTFT_MS (60), STREAMS_PER_VU (10), OUT (temp dir), CHECK=1
# (fail unless every answer joined and the errors are sane: the CI variant,
# make accuracy-short), CHECK_REUSE=1 (also fail on connection churn), BRIEF=1 (with CHECK=1: a verdict
# line per client, shape and level instead of the tables), PROFILE_AT (a level:
# an execution trace and a CPU profile of k6 there, for `go tool trace -pprof=sched`; PROFILE_FROM
# when, from k6's start, 0s: a third into the run; PROFILE_FOR how long each, 5s), REJOIN=1 (run
# nothing: print the tables of the run already in OUT again), RUNS (1: runs of every client at
# every level, interleaved; the ratios to the floor are then their median and range),
# LLM_HTTP (the k6 client's http option, e.g. 2: h2c to llm-sim, and the floor on h2c too,
# as many streams to a connection as a VU has), LLM_TLS=1 (llm-sim serves HTTPS, self-signed; both
# clients over HTTP/1.1, so each new connection's handshake is in its TTFT), START_SPREAD (0s: k6's VUs start spread over
# this long, a ramp, instead of together; the floor's goroutines alike, a VU's worth at a time).
set -euo pipefail
cd "$(dirname "$0")/.."
# Without OUT the traces and logs go to a temporary folder removed at the end.
if [ -n "${OUT:-}" ]; then
  out="$OUT"
  where="results in $out"
else
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
  where="results in a temporary folder removed at the end (OUT=DIR keeps them)"
fi
mkdir -p "$out"
echo "machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(go version | cut -d' ' -f3), load average $(cut -d' ' -f1-3 /proc/loadavg); $where"
go build -trimpath -o "$out/bareclient" ./bench/bareclient
go build -trimpath -o "$out/accuracy" ./bench/accuracy
"$out/accuracy" -brief="${BRIEF:-0}" -counts "${TEST_COUNTS:-}" -k6 "${K6:-./k6}" -sim "${LLM_SIM:-./llm-sim}" -bare "$out/bareclient" -out "$out" \
  -levels "${LEVELS:-1,50,200,500,1000}" -shapes "${SHAPES:-staggered,uniform}" -clients "${CLIENTS:-k6,bare}" \
  -duration "${DURATION:-15s}" -min-tokens "${MIN_TOKENS:-100}" -max-tokens "${MAX_TOKENS:-200}" -decode-ms "${DECODE_MS:-20}" -ttft-ms "${TTFT_MS:-60}" \
  -streams-per-vu "${STREAMS_PER_VU:-10}" -check="${CHECK:-0}" -check-reuse="${CHECK_REUSE:-0}" \
  -http "${LLM_HTTP:-}" -start-spread "${START_SPREAD:-0s}" -profile-at "${PROFILE_AT:-0}" -profile-from "${PROFILE_FROM:-0s}" -profile-for "${PROFILE_FOR:-5s}" -rejoin="${REJOIN:-0}" -runs "${RUNS:-1}" -tls="${LLM_TLS:-0}"
