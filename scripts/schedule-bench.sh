#!/usr/bin/env bash
# make bench-schedule: how late requests leave, the extension's Schedule against
# k6's constant-arrival-rate, and k6's memory with a large trace loaded.
#   1. dispatch: at each RATE, one run of each dispatcher (bench/schedule.js,
#      MODE=schedule and MODE=k6, the order alternating by rate so neither
#      always runs first) against llm-sim's zero-delay model, 4-token answers,
#      the same VU pool; one table of delay p50/p99 and drops.
#   2. memory: a Mooncake trace of TRACE_ROWS rows (made here in $OUT, never
#      committed) replayed by TRACE_VUS VUs: k6's live heap after a forced GC
#      (pprof), RSS and peak RSS, beside the same run with a 1 000-row trace;
#      each read both ways: through k6's file system (the default, k6 keeps
#      the text) and fromDisk (streamed, no copy).
# Expects ./k6 and ./llm-sim (make bench-schedule builds them); K6 and LLM_SIM
# point elsewhere. Knobs (environment): RATES (100 500 1000), DURATION (15s),
# VUS (100), TRACE_ROWS (1000000), TRACE_VUS (50), PARTS ("dispatch memory"),
# OUT (temp dir).
set -euo pipefail
cd "$(dirname "$0")/.."
k6="${K6:-./k6}"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
parts="${PARTS:-dispatch memory}"
echo "machine: $(nproc) vCPU, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load average $(cut -d' ' -f1-3 /proc/loadavg); commit $(git rev-parse --short HEAD); results in $out"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
sim_port=$(port)
"${LLM_SIM:-./llm-sim}" --addr "127.0.0.1:$sim_port" --model sim-fast=fast --seed 1 >"$out/llm-sim.log" 2>&1 &
sim_pid=$!
trap 'kill "$sim_pid" 2>/dev/null || true' EXIT
base="http://127.0.0.1:$sim_port/v1"
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$sim_port/metrics" >/dev/null && break; sleep 0.1; done

run() { # mode rate summary.json [extra k6 flags...]
  local mode=$1 rate=$2 json=$3
  shift 3
  /usr/bin/time -f '%U %S' -o "${json%.json}.cpu" "$k6" run -q --no-usage-report "$@" -e MODE="$mode" -e RATE="$rate" -e DURATION="${DURATION:-15s}" \
    -e VUS="${VUS:-100}" -e LLM_BASE_URL="$base" -e SUMMARY_JSON="$json" bench/schedule.js >"${json%.json}.log" 2>&1
}

if [[ " $parts " == *" dispatch "* ]]; then
  loads=()
  i=0
  for rate in ${RATES:-100 500 1000}; do
    order="schedule k6"
    ((i++ % 2)) && order="k6 schedule"
    for mode in $order; do
      echo "dispatch: $mode at $rate req/s for ${DURATION:-15s} (load average $(cut -d' ' -f1 /proc/loadavg))" >&2
      loads+=("$(cut -d' ' -f1 /proc/loadavg)")
      run "$mode" "$rate" "$out/dispatch-$mode-$rate.json"
    done
  done
  echo
  echo "${DURATION:-15s} per run, ${VUS:-100} VUs, llm-sim fast (zero delays), 4-token answers; load average during the runs: $(printf '%s\n' "${loads[@]}" | sort -n | sed -n '1p;$p' | paste -sd- )"
  echo
  echo "| req/s | dispatcher | sent | dropped | start delay p50 / p99 / max ms | same, Date.now() clock p50 / p99 ms | E2E p50 ms | k6 CPU s |"
  echo "|---|---|---|---|---|---|---|---|"
  for rate in ${RATES:-100 500 1000}; do
    for mode in schedule k6; do
      jq -r --arg mode "$mode" --arg cpu "$(awk '{printf "%.1f", $1 + $2}' "$out/dispatch-$mode-$rate.cpu")" '
        def f: if . == null then "—" else (. * 10 | round / 10 | tostring) end;
        (if $mode == "schedule" then .dispatch else .startJs end) as $d
        | [ (.rate | tostring),
            (if $mode == "schedule" then "Schedule.constant (send − due)" else "constant-arrival-rate (start − planned tick)" end),
            (.calls | tostring),
            (if $mode == "schedule" then .schedule.dropped else .k6Dropped end | tostring),
            (if $mode == "k6" and .k6Dropped > 0 then "unknown: a dropped tick takes no index"
             else "\($d["p(50)"] | f) / \($d["p(99)"] | f) / \($d.max | f)" end),
            (if $mode == "k6" and .k6Dropped > 0 then "unknown"
             else "\(.startJs["p(50)"] | f) / \(.startJs["p(99)"] | f)" end),
            (.e2e["p(50)"] | f), $cpu ]
        | "| " + join(" | ") + " |"' "$out/dispatch-$mode-$rate.json"
    done
  done
fi

# mooncake rows: a timestamp every 100 ms, inputs of 1..2*AVG_INPUT tokens (a
# hash id per 512), the first ids shared among rows of one of 1 000 prefixes.
make_trace() { # rows file
  awk -v rows="$1" -v avg="${AVG_INPUT:-7600}" 'BEGIN {
    srand(1); next_id = 1000000
    for (i = 0; i < rows; i++) {
      in_len = 1 + int(rand() * 2 * avg); blocks = int((in_len + 511) / 512); p = int(rand() * 1000)
      ids = ""
      for (b = 0; b < blocks; b++) ids = ids (b ? "," : "") (b < 4 ? p * 4 + b : next_id++)
      printf "{\"timestamp\": %d, \"input_length\": %d, \"output_length\": %d, \"hash_ids\": [%s]}\n", i * 100, in_len, 1 + int(rand() * 400), ids
    }
  }' >"$2"
}

heap() { # rows form (k6 or disk): prints "| rows | read | MB | ids | heapMB | rssMB | peakMB |"
  local rows=$1 form=$2 tr="$out/mooncake-$1.jsonl" addr pid
  [[ -s $tr ]] || make_trace "$rows" "$tr"
  addr="127.0.0.1:$(port)"
  "$k6" run -q --no-usage-report --summary-mode=disabled --address "$addr" --profiling-enabled \
    -e MODE=trace -e TRACE="$tr" -e FROM_DISK="$([[ $form == disk ]] && echo 1 || echo 0)" -e DURATION=120s \
    -e VUS="${TRACE_VUS:-50}" -e LLM_BASE_URL="$base" \
    -e SUMMARY_JSON="$out/memory-$rows-$form.json" bench/schedule.js >"$out/memory-$rows-$form.log" 2>&1 &
  pid=$!
  # loaded: the VUs are sending (llm-sim counts the trace's prompts)
  local before
  before=$(curl -fs "http://127.0.0.1:$sim_port/metrics" | awk '/^vllm:prompt_tokens_total/ {print $2}')
  for _ in $(seq 1200); do
    now=$(curl -fs "http://127.0.0.1:$sim_port/metrics" | awk '/^vllm:prompt_tokens_total/ {print $2}')
    [[ $now != "$before" ]] && break
    kill -0 "$pid" 2>/dev/null || { echo "k6 ended before sending (see $out/memory-$rows-$form.log)" >&2; return 1; }
    sleep 0.25
  done
  sleep 5
  local heap_b
  heap_b=$(curl -fs "http://$addr/debug/pprof/heap?gc=1&debug=1" | awk '/^# HeapAlloc = / {print $4}')
  curl -fs "http://$addr/debug/pprof/heap?gc=1" -o "$out/memory-$rows-$form-heap.pprof"
  local rss hwm
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
  kill -INT "$pid"
  wait "$pid" || true
  awk -v r="$rows" -v form="$([[ $form == disk ]] && echo 'fromDisk' || echo "k6's file system")" \
    -v mb="$(stat -c %s "$tr")" -v ids="$(grep -o ',' "$tr" | wc -l)" -v h="$heap_b" -v rss="$rss" -v hwm="$hwm" \
    'BEGIN { printf "| %d | %s | %.1f | %d | %.1f | %.1f | %.1f |\n", r, form, mb / 1048576, ids - 2 * r, h / 1048576, rss / 1024, hwm / 1024 }'
}

if [[ " $parts " == *" memory "* ]]; then
  echo
  echo "k6 replaying a Mooncake trace with ${TRACE_VUS:-50} VUs (one copy in the process), 5 s after the first send; load average $(cut -d' ' -f1 /proc/loadavg)"
  echo
  echo "| trace rows | read through | file MB | hash ids (≈) | live heap MB | RSS MB | peak RSS MB |"
  echo "|---|---|---|---|---|---|---|"
  for rows in 1000 "${TRACE_ROWS:-1000000}"; do
    heap "$rows" k6
    heap "$rows" disk
  done
fi
