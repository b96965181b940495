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
    go test -run='^$' -fuzz="^${t}\$" -fuzztime="$fuzztime" "$pkg" >/tmp/fuzz-$t.log 2>&1 || { cat /tmp/fuzz-$t.log; exit 1; }
  done
done
echo "fuzz: all targets passed"
