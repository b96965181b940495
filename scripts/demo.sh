#!/usr/bin/env bash
# The demo: start llm-sim on loopback, run an example with thresholds against it,
# stop llm-sim whatever happens. Expects ./k6 and ./llm-sim (make demo builds them).
#
# On a real test the load generator and the server under test belong on
# different machines: here both share one for a self-contained demo.
set -euo pipefail
cd "$(dirname "$0")/.."
script="${1:-${DEMO_SCRIPT:-examples/mixed-workload.js}}"
log="$(mktemp)"
# An example may name the simulator set-up it needs on a first line "// llm-sim: ARGS".
args="$(sed -n '1s#^// llm-sim:##p' "$script")"
[ -n "$args" ] || args="--model sim-large=demo --model sim-small=small --model sim-fast=fast --seed 1"
# shellcheck disable=SC2086 # the arguments are words by design
./llm-sim --addr 127.0.0.1:0 $args >"$log" 2>&1 &
sim=$!
cleanup() { kill "$sim" 2>/dev/null || true; wait "$sim" 2>/dev/null || true; rm -f "$log"; }
trap cleanup EXIT INT TERM
url=""
for _ in $(seq 1 100); do
  url="$(grep -o 'http://[0-9.:]*' "$log" | head -n1 || true)"
  [ -n "$url" ] && break
  kill -0 "$sim" 2>/dev/null || { cat "$log"; echo "llm-sim exited early" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$log"; echo "llm-sim did not start" >&2; exit 1; }
echo "llm-sim at $url; running $script"
./k6 run -e LLM_BASE_URL="$url/v1" -e DURATION="${DURATION:-30s}" "$script"
