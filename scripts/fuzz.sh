#!/usr/bin/env bash
# Runs every fuzz target in the module for a short while (default 3s each).
# A failure leaves its crasher in testdata/fuzz/<Target>/ of the package: commit it as a fixture.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${1:-3s}"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  targets=$(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u || true)
  for t in $targets; do
    echo "fuzz $pkg $t ($fuzztime)"
    log="${TMPDIR:-/tmp}/fuzz-$t.log"
    if ! go test -run='^$' -fuzz="^${t}\$" -fuzztime="$fuzztime" "$pkg" >"$log" 2>&1; then
      # On a starved machine the fuzzing engine itself can time out coordinating its
      # workers ("context deadline exceeded") with no failing input: run it once more.
      # A real crasher ("Failing input written to …") is never retried.
      if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input' "$log"; then
        echo "fuzz $pkg $t: the fuzzing engine timed out without a failing input; once more"
        go test -run='^$' -fuzz="^${t}\$" -fuzztime="$fuzztime" "$pkg" >"$log" 2>&1 || { cat "$log"; exit 1; }
      else
        cat "$log"
        exit 1
      fi
    fi
  done
done
echo "fuzz: all targets passed"
