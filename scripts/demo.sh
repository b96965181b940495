#!/usr/bin/env bash
# The demo: start llm-sim on loopback, run an example with thresholds against it,
# stop llm-sim whatever happens, then say where the report went. Expects ./k6 and
# ./llm-sim (make demo builds them). DURATION, when set, is passed to the script
# (make demo: 30s); otherwise the script's own default holds, as when the same
# script is run by hand with ./k6 run — so a baseline written by one run compares
# with the next on equal terms. Reports go to reports/ (ignored by git), or
# LLM_REPORT_DIR.
#
# On a real test the load generator and the server under test belong on
# different machines: here both share one for a self-contained demo.
set -euo pipefail
cd "$(dirname "$0")/.."
script="${1:-${DEMO_SCRIPT:-examples/mixed-workload.js}}"
log="$(mktemp)"
stamp="$(mktemp)"
# An example may name the simulator set-up it needs on a first line "// llm-sim: ARGS".
args="$(sed -n '1s#^// llm-sim:##p' "$script")"
[ -n "$args" ] || args="--model sim-large=demo --model sim-small=small --model sim-fast=fast --seed 1"
# shellcheck disable=SC2086 # the arguments are words by design
./llm-sim --addr 127.0.0.1:0 $args >"$log" 2>&1 &
sim=$!
cleanup() { kill "$sim" 2>/dev/null || true; wait "$sim" 2>/dev/null || true; rm -f "$log" "$stamp"; }
trap cleanup EXIT INT TERM
url=""
for _ in $(seq 1 100); do
  url="$(grep -o 'http://[0-9.:]*' "$log" | head -n1 || true)"
  [ -n "$url" ] && break
  kill -0 "$sim" 2>/dev/null || { cat "$log"; echo "llm-sim exited early" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$log"; echo "llm-sim did not start" >&2; exit 1; }
envs=(-e LLM_BASE_URL="$url/v1")
[ -z "${DURATION:-}" ] || envs+=(-e DURATION="$DURATION")
[ -z "${LLM_REPORT_DIR:-}" ] || envs+=(-e LLM_REPORT_DIR="$LLM_REPORT_DIR")
echo "llm-sim at $url; running $script${DURATION:+ for $DURATION}"
rc=0
./k6 run "${envs[@]}" "$script" || rc=$?

echo
dir="${LLM_REPORT_DIR:-reports}"
written="$(find "$dir" -maxdepth 1 -type f -newer "$stamp" 2>/dev/null | sort || true)"
if [ -n "$written" ]; then
  echo "The report (the \"LLM streams — where the time went\" section above, with its diagnosis) is also in:"
  while IFS= read -r f; do
    case "$f" in
      *.html) echo "  $f   (open it in a browser: charts per stage and category)" ;;
      *.json) echo "  $f   (the run record: pass it as LLM_BASELINE to the next run to compare)" ;;
      *) echo "  $f" ;;
    esac
  done <<<"$written"
fi
if grep -q 'gracefulStop' "$script"; then
  echo "If k6 counted \"interrupted iterations\" above: those calls were still streaming when the test's"
  echo "time ran out and its gracefulStop wait ended (long answers take tens of seconds here); k6 cut them off."
  echo "They are not failures and are in no figure: the report counts only the calls that finished."
fi
[ "$rc" = 0 ] || echo "k6 exited $rc (99: a threshold failed; see the ✗ lines above)"
exit "$rc"
