#!/usr/bin/env bash
# The soak (make soak: 30 minutes at a high token rate with default options;
# make soak-short: the CI-sized 2.5 minutes; both set the variables below).
# Run directly, its own defaults: SOAK_VUS (200) streams against llm-sim with
# SOAK_FAULT_RATE (0.01) of the requests faulted (disconnects, stalls past the
# idle timeout, 500s, in-stream errors) for SOAK_DURATION (10m). k6's resident
# memory, live Go heap and goroutine count are sampled every SOAK_EVERY (15s) and
# printed as a table; the run fails when the last third of the run is clearly
# above the first. Expects ./k6 and ./llm-sim (make soak builds them); K6 and
# LLM_SIM point elsewhere. SOAK_GAP_SAMPLES ('request'; 'default' leaves it unset) picks the
# client's gapSamples; SOAK_MAX_TOKENS (256) and SOAK_DECODE_MS (20) the answers; SOAK_MAX_HEAP_GROWTH
# (MB/min, with SOAK_WARMUP) judges by slopes instead of thirds (make soak, make soak-short): the
# live heap but k6's Trend sample store must grow slower than it, and the store itself by at most
# SOAK_MAX_TREND_PER_TOKEN bytes per output token (0: no bound); SOAK_MEMPROFILERATE (65536) is
# k6's heap profile sampling rate, which the split by stack reads;
# LOG_FAILURES=1 makes k6 log every failed call (on stderr); SOAK_TRACE=1 has llm-sim
# write its ground truth and reports the server's longest pauses.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
echo "machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg); results in $out"
go build -trimpath -o "$out/soak" ./bench/soak
exec "$out/soak" -k6 "${K6:-./k6}" -sim "${LLM_SIM:-./llm-sim}" -out "$out" \
  -duration "${SOAK_DURATION:-10m}" -every "${SOAK_EVERY:-15s}" -vus "${SOAK_VUS:-200}" \
  -fault-rate "${SOAK_FAULT_RATE:-0.01}" -gap-samples "${SOAK_GAP_SAMPLES:-request}" \
  -max-tokens "${SOAK_MAX_TOKENS:-256}" -decode-ms "${SOAK_DECODE_MS:-20}" \
  -max-heap-growth "${SOAK_MAX_HEAP_GROWTH:-0}" -max-trend-per-token "${SOAK_MAX_TREND_PER_TOKEN:-0}" \
  -warmup "${SOAK_WARMUP:-30s}" -memprofilerate "${SOAK_MEMPROFILERATE:-65536}" \
  -trace="${SOAK_TRACE:-0}"
