#!/usr/bin/env bash
# What `make test` needs besides Go and make, checked in a second before anything
# builds: a C compiler (-race needs cgo), Node.js and npm (make types: TypeScript),
# Chromium (renders the HTML report and the web dashboard in tests) and Prometheus
# (the Grafana dashboard's queries run against a real one). `make test` and .ci/run
# both start here, so what CI installs and what a user is told to install are one list.
#
# As root with apt-get it installs what is missing (Debian/Ubuntu package names);
# otherwise it stops at once with the exact command to run. ALLOW_MISSING=1 goes on
# without Chromium and Prometheus (their tests then skip, saying so); Go, the C
# compiler and npm are always needed.
set -euo pipefail
cd "$(dirname "$0")/.."

# Go first: nothing else works without it, and no Debian package is new enough.
want_go="$(sed -n 's/^go \([0-9.]*\).*/\1/p' go.mod)"
if ! command -v go >/dev/null 2>&1; then
  echo "setup: go is not on PATH; this module needs Go $want_go or newer: https://go.dev/dl/ (then add its bin/ to PATH)" >&2
  exit 1
fi
have_go="$(go env GOVERSION | sed 's/^go//')"
if [ "$(printf '%s\n%s\n' "$want_go" "$have_go" | sort -V | head -n1)" != "$want_go" ]; then
  echo "setup: go $have_go is older than the $want_go go.mod asks for: https://go.dev/dl/" >&2
  exit 1
fi

# each requirement: a command (any of |-separated names), its Debian packages, whether
# ALLOW_MISSING may skip it, and what needs it.
reqs=(
  "cc|gcc;gcc libc6-dev;no;go test -race (cgo)"
  "node;nodejs;no;make types (TypeScript)"
  "npm;npm;no;make types (npm ci)"
  "chromium|chromium-browser|google-chrome;chromium;yes;the HTML report and web dashboard tests"
  "prometheus;prometheus;yes;the Grafana dashboard test"
)

found() { # found "a|b|c": the first of the commands on PATH
  local c
  for c in ${1//|/ }; do
    if command -v "$c" >/dev/null 2>&1; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

check() { # sets missing_pkgs, missing_what, optional_only; prints what is there
  missing_pkgs=() missing_what=() optional_only=1 have=()
  local r cmds pkgs optional what p
  for r in "${reqs[@]}"; do
    IFS=';' read -r cmds pkgs optional what <<<"$r"
    if p="$(found "$cmds")"; then
      have+=("${p##*/}")
    else
      # shellcheck disable=SC2206 # package lists are words
      missing_pkgs+=($pkgs)
      missing_what+=("$(printf '%-11s for %s' "${cmds%%|*}" "$what")")
      [ "$optional" = yes ] || optional_only=0
    fi
  done
}

check
if [ ${#missing_pkgs[@]} -eq 0 ]; then
  echo "setup: go $have_go, ${have[*]}: everything make test needs is installed"
  exit 0
fi

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing ${missing_pkgs[*]} with apt-get (a minute or two), for:"
  printf '  %s\n' "${missing_what[@]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q | grep -v '^\(Hit\|Get\|Ign\):' || true
  apt-get install -y -q --no-install-recommends "${missing_pkgs[@]}" | grep -E '^(Setting up|Unpacking|E:)' || true
  check
  if [ ${#missing_pkgs[@]} -eq 0 ]; then
    echo "setup: go $have_go, ${have[*]}: installed"
    exit 0
  fi
  echo "setup: apt-get could not install ${missing_pkgs[*]}; still missing:" >&2
  printf '  %s\n' "${missing_what[@]}" >&2
  exit 1
fi

if [ "$optional_only" = 1 ] && [ "${ALLOW_MISSING:-0}" = 1 ]; then
  echo "setup: WARNING (ALLOW_MISSING=1): these are missing, their tests will skip:"
  printf '  %s\n' "${missing_what[@]}"
  exit 0
fi

{
  echo "setup: make test needs these, missing here:"
  printf '  %s\n' "${missing_what[@]}"
  if command -v apt-get >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
      echo "install them:  apt-get install -y --no-install-recommends ${missing_pkgs[*]}"
    elif command -v sudo >/dev/null 2>&1; then
      echo "install them:  sudo apt-get install -y --no-install-recommends ${missing_pkgs[*]}"
    else
      echo "install them as root:  apt-get install -y --no-install-recommends ${missing_pkgs[*]}"
    fi
    echo "(or run make test as root: it installs them itself)"
  else
    echo "install these (their Debian package names): ${missing_pkgs[*]}"
  fi
  [ "$optional_only" = 0 ] || echo "or go on without them, their tests skipping: make test ALLOW_MISSING=1"
} >&2
exit 1
