#!/usr/bin/env bash
# k6v2.sh — proves the module builds and runs on k6 v2 beside its own k6 v1.8 build.
#
# The module's go.mod stays on go.k6.io/k6 v1.x (the newest major the Go module proxy
# here serves). This script makes the v2 variant in a scratch directory: the tracked
# files copied, every go.k6.io/k6/... import rewritten to go.k6.io/k6/v2/..., go.k6.io/k6/v2
# required and replaced by a local k6 v2 source tree, `go mod tidy`; then it builds k6
# (./cmd/k6) from it and runs the end-to-end smoke with that binary against llm-sim:
# the quickstart, a report compared with a baseline, a violated threshold failing the run,
# the web dashboard's LLM tab (the e2e tests take the binary from LLMSTREAM_E2E_K6).
#
# The port is a rename on purpose: k6-facing code lives in binding/ (and the root's
# registration) and uses only APIs that v1.8 and v2 share (docs/k6-versions.md). Anything that stops being a rename
# fails here, not in a user's xk6 build.
#
#   K6V2_SRC      k6 v2 module source (go.k6.io/k6/v2); default: ../shared/k6-v2.2.0 beside
#                 the repository (or beside its main checkout, from a git worktree). Missing: the check is skipped with a message (exit 0),
#                 unless K6V2_REQUIRED=1.
#   K6V2_OUT      where to leave the v2 k6 binary (default: a temporary directory, removed).
#   K6V2_SMOKE    0 to build only (no e2e smoke).
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
src=${K6V2_SRC:-$root/../shared/k6-v2.2.0}
if [ -z "${K6V2_SRC:-}" ] && [ ! -d "$src" ]; then
  # A git worktree: the tree beside the main checkout.
  common=$(cd "$root" && cd "$(git rev-parse --git-common-dir)/.." && pwd)
  src=$common/../shared/k6-v2.2.0
fi
if [ ! -f "$src/go.mod" ]; then
  if [ "${K6V2_REQUIRED:-0}" = 1 ]; then
    echo "k6v2: $src not found (K6V2_SRC)" >&2
    exit 1
  fi
  echo "k6v2: skipped: ${K6V2_SRC:-../shared/k6-v2.2.0} not found (set K6V2_SRC to a go.k6.io/k6/v2 source tree)"
  # make test's summary counts it as skipped, not passed.
  [ -z "${TEST_COUNTS:-}" ] || echo "passed 0 failed 0 skipped 1" >>"$TEST_COUNTS"
  exit 0
fi
src=$(cd "$src" && pwd)
if ! grep -q '^module go.k6.io/k6/v2$' "$src/go.mod"; then
  echo "k6v2: $src/go.mod is not the module go.k6.io/k6/v2" >&2
  exit 1
fi
# The version the replaced module is required at: the tree's tag when its directory says so.
version=v2.0.0
case "$(basename "$src")" in k6-v2.*) version=${src##*/k6-} ;; esac

work=$(mktemp -d "${TMPDIR:-/tmp}/llmstream-k6v2.XXXXXX")
trap 'rm -rf "$work"' EXIT
mod=$work/module
mkdir -p "$mod"

# The tracked files (and untracked, not ignored ones: a contributor's work in progress).
(cd "$root" && git ls-files -z --cached --others --exclude-standard) |
  (cd "$root" && while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done) |
  (cd "$root" && xargs -0 cp --parents -t "$mod")

# Rewrite the imports: "go.k6.io/k6" and "go.k6.io/k6/..." in Go files, nothing else
# (a string that merely names k6 is not an import).
find "$mod" -name '*.go' -print0 |
  xargs -0 sed -i -E 's#"go\.k6\.io/k6(/[^"]*)?"#"go.k6.io/k6/v2\1"#g'
if grep -rqE '"go\.k6\.io/k6/v2/v2' --include='*.go' "$mod"; then
  echo "k6v2: an import was rewritten twice" >&2
  exit 1
fi

cd "$mod"
go mod edit -droprequire=go.k6.io/k6 -require="go.k6.io/k6/v2@$version" -replace="go.k6.io/k6/v2=$src"
echo "k6v2: go mod tidy against $src ($version)"
GOFLAGS=-mod=mod go mod tidy
echo "k6v2: go build ./cmd/k6, go vet . (the binding and its tests type-checked against v2)"
go build -trimpath -o "$work/k6" ./cmd/k6
go vet .
"$work/k6" version | tee "$work/version.txt"
if ! grep -q 'github.com/llmstream/xk6-llmstream' "$work/version.txt"; then
  echo "k6v2: the v2 k6 does not list the extension" >&2
  exit 1
fi

if [ -n "${K6V2_OUT:-}" ]; then
  mkdir -p "$K6V2_OUT"
  cp "$work/k6" "$K6V2_OUT/k6"
  echo "k6v2: binary at $K6V2_OUT/k6"
fi
[ "${K6V2_SMOKE:-1}" = 0 ] && exit 0

# The smoke: the v1 e2e tests, with the v2 binary. Run from the repository (not the
# scratch copy): the tests, llm-sim and the examples are the module's own.
cd "$root"
status=0
LLMSTREAM_E2E_K6="$work/k6" go test -count=1 -timeout 10m -v ./e2e/ \
  -run '^(TestExamples|TestBaselineVerdictAfterSlowerDecode|TestViolatedThresholdFailsTheRun|TestWebDashboardLLMTab|TestSmokeScript)$/^quickstart\.js$' \
  >"$work/e2e.txt" 2>&1 || status=$?
if [ "$status" = 0 ]; then
  grep -E '^(\s*--- |ok)|: skipping|chromium is not' "$work/e2e.txt" || true
  echo "k6v2: the e2e smoke passed on k6 $version"
else
  cat "$work/e2e.txt"
  echo "k6v2: the e2e smoke failed on k6 $version" >&2
fi
exit "$status"
