#!/usr/bin/env bash
# make test: runs the given make targets one after another (setup first: it stops
# the run in seconds when something is missing), times each, and ends with a
# summary of every stage — time, passed, failed, skipped — and a plain
# "N passed, N failed" line. Each stage's counts come from the stage itself
# (TEST_COUNTS: go test's tests, fuzz targets, accuracy checks); a stage that
# counts nothing is one check, passed or failed by its exit code. A failed stage
# does not stop the later ones (FAILFAST=1 does), so one run shows every failure.
set -uo pipefail
cd "$(dirname "$0")/.."
TEST_COUNTS="$(mktemp)"
export TEST_COUNTS
trap 'rm -f "$TEST_COUNTS"' EXIT

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# The summary's first column fits the longest stage name.
w=5
for stage in "$@"; do [ ${#stage} -le $w ] || w=${#stage}; done
rows=() total_pass=0 total_fail=0 total_skip=0 failed_stages=() failing=() t_all=$(date +%s)
for stage in "$@"; do
  echo
  echo "=== make $stage ($(date +%H:%M:%S))"
  : >"$TEST_COUNTS"
  t0=$(date +%s)
  make --no-print-directory "$stage"
  rc=$?
  # Nothing runs without what setup checks: its own message says what to install.
  [ "$stage" != setup ] || [ "$rc" = 0 ] || exit 1
  secs=$(($(date +%s) - t0))
  read -r pass fail skip < <(awk '{p += $2; f += $4; s += $6} END {print p+0, f+0, s+0}' "$TEST_COUNTS")
  if [ ! -s "$TEST_COUNTS" ]; then
    pass=1 fail=0 skip=0
    [ "$rc" = 0 ] || pass=0 fail=1
  fi
  if [ "$rc" != 0 ] && [ "$fail" = 0 ]; then fail=1; fi # failed without a failing count (a build error)
  # The failed tests' names (after "failing" on a counts line): the summary names them,
  # since a long run's log is often read only from its end.
  names=$(awk '$7 == "failing" {for (i = 8; i <= NF; i++) printf "%s ", $i}' "$TEST_COUNTS")
  [ -z "$names" ] || failing+=("$stage: ${names% }")
  result=ok
  [ "$rc" = 0 ] || { result=FAILED; failed_stages+=("$stage"); }
  rows+=("$(printf '%-*s %8s %7d %7d %8d  %s' "$w" "$stage" "$(fmt_time "$secs")" "$pass" "$fail" "$skip" "$result")")
  total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skip))
  if [ "$rc" != 0 ] && [ "${FAILFAST:-0}" = 1 ]; then
    break
  fi
done

echo
echo "=== make test summary ($(fmt_time $(($(date +%s) - t_all))) in all)"
printf '%-*s %8s %7s %7s %8s  %s\n' "$w" stage time passed failed skipped result
printf '%s\n' "${rows[@]}"
[ "$total_skip" = 0 ] || echo "($total_skip skipped: each said why above)"
[ ${#failed_stages[@]} = 0 ] || echo "failed: ${failed_stages[*]} (make ${failed_stages[0]} runs one again)"
[ ${#failing[@]} = 0 ] || printf 'failed tests: %s\n' "${failing[@]}"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ] && [ ${#failed_stages[@]} = 0 ]
