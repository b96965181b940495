#!/usr/bin/env bash
# Runs every fuzz target in the module for a short while (default 3s each; make fuzz-short gives 1s).
# A failure leaves its crasher in testdata/fuzz/<Target>/ of the package: commit it as a fixture.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-3s}"
passed=0
logs="$(mktemp -d)" # each target's output, shown when it fails, removed at the end
trap 'rm -rf "$logs"' EXIT
# counts() appends this step's tally for make test's summary (scripts/test.sh sets TEST_COUNTS).
counts() { [ -z "${TEST_COUNTS:-}" ] || echo "passed $passed failed $1 skipped 0" >>"$TEST_COUNTS"; }
# fuzzcache is where go test keeps each target's corpus of interesting inputs: the
# test binary below is given its package's, so it fuzzes on from what go test found.
fuzzcache="$(go env GOCACHE)/fuzz"
# fuzz runs target $t of package $pkg from its test binary $bin into $log, from the
# package's directory as go test runs it: a crasher goes to its testdata/fuzz.
fuzz() {
  (cd "$dir" && "$bin" -test.run='^$' -test.fuzz="^${t}\$" -test.fuzztime="$fuzztime" -test.fuzzcachedir="$fuzzcache/$pkg") >"$log" 2>&1
}
# Each package's test binary is built once, with fuzzing instrumentation, and run for
# each of its targets (go test -fuzz would link it again for every target).
while read -r pkg dir; do
  targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
  [ -n "$targets" ] || continue
  bin="$logs/${pkg//\//_}.test"
  go test -c -o "$bin" -fuzz="^$(echo "$targets" | head -1)\$" "$pkg"
  for t in $targets; do
    echo "fuzz $pkg $t ($fuzztime)"
    log="$logs/$t.log"
    if ! fuzz; then
      # On a starved machine the fuzzing engine itself can time out coordinating its
      # workers ("context deadline exceeded") with no failing input: run it once more.
      # A real crasher ("Failing input written to …") is never retried.
      if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input' "$log"; then
        echo "fuzz $pkg $t: the fuzzing engine timed out without a failing input; once more"
        fuzz || { cat "$log"; counts 1; exit 1; }
      else
        cat "$log"
        counts 1
        exit 1
      fi
    fi
    passed=$((passed + 1))
  done
done < <(go list -f '{{.ImportPath}} {{.Dir}}' ./...)
counts 0
echo "fuzz: all $passed targets passed"
