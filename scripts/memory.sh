#!/usr/bin/env bash
# make memory: k6's live heap, RSS and goroutines with N streams held open
# against llm-sim's slow profile (bench/memory); the cost of one in-flight
# stream is the slope between levels. Expects ./k6 and ./llm-sim (make memory
# builds them); K6 and LLM_SIM point elsewhere. Knobs (environment): LEVELS
# (100,1000,5000), STREAMS_PER_VU (50; 1 = one stream per VU), TOKENS (90: the
# seconds each stream stays open), OUT (temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
echo "machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg); results in $out"
go build -trimpath -o "$out/memory" ./bench/memory
exec "$out/memory" -k6 "${K6:-./k6}" -sim "${LLM_SIM:-./llm-sim}" -out "$out" \
  -levels "${LEVELS:-100,1000,5000}" -streams-per-vu "${STREAMS_PER_VU:-50}" -tokens "${TOKENS:-90}"
