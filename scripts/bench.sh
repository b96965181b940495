#!/usr/bin/env bash
# make bench: the client's benchmarks (numbers go in BENCHMARKS.md with the
# command that produced them). Expects ./k6 and ./llm-sim (make bench builds them).
#   1. hot-path Go benchmarks, per event (internal/stream, internal/protocol)
#   2. loopback: k6 with this module vs bench/bareclient against llm-sim's
#      zero-delay model, interleaved rounds, tokens/s and CPU time of each client
#   3. a CPU profile of k6 during a loopback run, split by who spends the CPU
#   4. calls (not in the default parts): the per-call cost, the loopback run with
#      4-token answers and embeddings calls at batch 1 (calls/s and client CPU per
#      call): the module, k6's own http.post of the same request (the level the
#      module is held to) and the bare client, interleaved; then CPU profiles
#      of a chat run and of a k6/http run taken in turns, side by side in µs per
#      call (where a call's extra cost goes): BENCH_PARTS=calls ./scripts/bench.sh,
#      or make bench-calls
# K6_BASE (another k6 build: an earlier commit's, or the k6 v2 build of make k6v2
# with K6V2_OUT) runs beside ./k6 in the same rounds, as base-request and base-event
# in the loopback part and base-event and base-embed in calls
# Knobs (environment): BENCH_PARTS ("go loopback"; the loopback part includes the
# profile unless PROFILE_SECONDS=0), BENCHTIME (2s), COUNT (3), ROUNDS (3; 9 in
# calls), DURATION (30s; 6s in calls), VUS (50), MAX_TOKENS (1000), PROFILE_SECONDS (20;
# 10 in calls, each of PROFILE_ROUNDS (3) turns), CALLS_CLIENTS and PROFILE_CLIENTS (the
# calls part's clients and the ones it profiles, k6-sampled,k6-http; see bench/loopback
# -h), OUT (temp dir),
# K6 and LLM_SIM (other binaries than ./k6 and ./llm-sim).
set -euo pipefail
cd "$(dirname "$0")/.."

parts="${BENCH_PARTS:-go loopback}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
echo "machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(go version | cut -d' ' -f3), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "results in $out"

if [[ " $parts " == *" go "* ]]; then
  echo
  echo "== go test -run '^\$' -bench . -benchtime=${BENCHTIME:-2s} -count=${COUNT:-3} ./internal/stream ./internal/protocol =="
  go test -run '^$' -bench . -benchtime="${BENCHTIME:-2s}" -count="${COUNT:-3}" ./internal/stream ./internal/protocol |
    tee "$out/go-bench.txt"
fi

if [[ " $parts " == *" loopback "* ]]; then
  echo
  go build -trimpath -o "$out/bareclient" ./bench/bareclient
  go build -trimpath -o "$out/loopback" ./bench/loopback
  "$out/loopback" -k6 "${K6:-./k6}" -sim "${LLM_SIM:-./llm-sim}" -bare "$out/bareclient" -out "$out" \
    -rounds "${ROUNDS:-3}" -duration "${DURATION:-30s}" -vus "${VUS:-50}" -max-tokens "${MAX_TOKENS:-1000}" \
    -clients "bare,k6-request,k6-event${K6_BASE:+,base-request,base-event}" -k6-base "${K6_BASE:-}" \
    -profile-seconds "${PROFILE_SECONDS:-20}"
fi

if [[ " $parts " == *" calls "* ]]; then
  # Many short rounds rather than a few long ones: a shared machine's speed
  # drifts by tens of percent over minutes, and a ratio is only as good as
  # its two runs' nearness in time.
  echo
  go build -trimpath -o "$out/bareclient" ./bench/bareclient
  go build -trimpath -o "$out/loopback" ./bench/loopback
  "$out/loopback" -k6 "${K6:-./k6}" -sim "${LLM_SIM:-./llm-sim}" -bare "$out/bareclient" -out "$out" \
    -rounds "${ROUNDS:-9}" -duration "${DURATION:-6s}" -vus "${VUS:-50}" -max-tokens 4 \
    -clients "${CALLS_CLIENTS:-bare,k6-sampled,k6-event,k6-http,k6-http-async,bare-embed,extension-embed,k6-http-embed}${K6_BASE:+,base-event,base-embed}" \
    -k6-base "${K6_BASE:-}" -profile-seconds "${PROFILE_SECONDS:-10}" -profile-rounds "${PROFILE_ROUNDS:-3}" \
    -profile-clients "${PROFILE_CLIENTS:-k6-sampled,k6-http}"
fi
