#!/usr/bin/env bash
# CPU per embeddings call: BenchmarkEmbedCall's module and bare-client cases,
# each in its own process for a fixed number of calls, interleaved, ROUNDS
# times. CPU (user + sys of the process, bash's `time`) over the calls is
# steadier than calls/s on a shared machine: a busy neighbour stretches the
# wall clock of both clients, not the CPU each spends. The in-process server's
# CPU is in both figures alike. A process's start (the JavaScript runtime,
# the tokenizer's vocabulary, ~0.1-0.2 s of CPU for the module) is paid once
# per test run, not per call: each case is also run for one call, and that
# run's CPU is taken off the n calls' before dividing.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
bin=$(mktemp -d)/embed.test
CGO_ENABLED=0 go test -c -o "$bin" ./binding/module
echo "load average $(cut -d' ' -f1-3 /proc/loadavg), $(git rev-parse --short HEAD)"
TIMEFORMAT='%U %S'
cpu() { # user + sys seconds of one run of case $2 by client $1 for $3 calls
  local t
  t=$( { time "$bin" -test.run '^$' -test.bench "EmbedCall/$1/$2\$" -test.benchtime "$3x" >/dev/null; } 2>&1 )
  awk -v t="$t" 'BEGIN { split(t, a, " "); print a[1] + a[2] }'
}
rows=$(mktemp)
printf '%-6s %-16s %-6s %s\n' round case client 'CPU µs per call'
for r in $(seq "$ROUNDS"); do
  for c in batch-1/float:3000 batch-1/base64:3000 batch-32/float:200 batch-32/base64:200; do
    name=${c%%:*} n=${c##*:}
    for who in module bare; do
      one=$(cpu "$who" "$name" 1) many=$(cpu "$who" "$name" "$n")
      # the n-call run runs its body once with N=1 first: n+1 calls, less the one-call run's one
      awk -v one="$one" -v many="$many" -v n="$n" -v r="$r" -v c="$name" -v w="$who" \
        'BEGIN { printf "%-6s %-16s %-6s %.0f\n", r, c, w, (many - one) * 1e6 / n }' | tee -a "$rows"
    done
  done
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"
# per case: medians of each client's CPU per call, and of the per-round
# ratio module calls per CPU second / bare calls per CPU second (= bare CPU / module CPU)
printf '%-16s %-12s %-12s %s\n' case module bare 'ratio median (range)'
awk '{ cpu[$2, $3, $1] = $4; rounds[$1]; cases[$2] }
  function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t } return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2 }
  END {
    split("batch-1/float batch-1/base64 batch-32/float batch-32/base64", order, " ")
    for (k = 1; k <= 4; k++) { c = order[k]; if (!(c in cases)) continue
      n = 0; delete m; delete b; delete q; lo = 1e9; hi = 0
      for (r in rounds) { n++; m[n] = cpu[c, "module", r]; b[n] = cpu[c, "bare", r]; q[n] = b[n] / m[n]
        if (q[n] < lo) lo = q[n]; if (q[n] > hi) hi = q[n] }
      printf "%-16s %-12s %-12s %.2f (%.2f-%.2f)\n", c, sprintf("%.0f µs", med(m, n)), sprintf("%.0f µs", med(b, n)), med(q, n), lo, hi
    } }' "$rows"
