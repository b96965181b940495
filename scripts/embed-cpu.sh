#!/usr/bin/env bash
# CPU per embeddings call: BenchmarkEmbedCall's module and bare-client cases,
# each in its own process for a fixed number of calls, interleaved, ROUNDS
# times. CPU (user + sys of the process, bash's `time`) over the calls is
# steadier than calls/s on a shared machine: a busy neighbour stretches the
# wall clock of both clients, not the CPU each spends. The in-process server's
# CPU is in both figures alike.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
bin=$(mktemp -d)/embed.test
CGO_ENABLED=0 go test -c -o "$bin" .
echo "load average $(cut -d' ' -f1-3 /proc/loadavg), $(git rev-parse --short HEAD)"
printf '%-6s %-16s %-6s %s\n' round case client 'CPU µs per call'
for r in $(seq "$ROUNDS"); do
  for c in batch-1/float:3000 batch-1/base64:3000 batch-32/float:200 batch-32/base64:200; do
    name=${c%%:*} n=${c##*:}
    for who in module bare; do
      TIMEFORMAT='%U %S'
      t=$( { time "$bin" -test.run '^$' -test.bench "EmbedCall/$who/$name\$" -test.benchtime "${n}x" >/dev/null; } 2>&1 )
      # the benchmark runs its body once with N=1 before the N calls
      awk -v t="$t" -v n="$n" -v r="$r" -v c="$name" -v w="$who" \
        'BEGIN { split(t, a, " "); printf "%-6s %-16s %-6s %.0f\n", r, c, w, (a[1] + a[2]) * 1e6 / (n + 1) }'
    done
  done
done
