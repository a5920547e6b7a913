#!/bin/sh
# results/SCHEMA.md documents every column fabricbench writes and every metric it emits
# (curl keeps its options documented the same way: a test fails when one is not).
. "$(dirname "$0")/lib.sh"
schema=$1 bin=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Two ranks, so that every benchmark (p2p needs a pair) writes its rows and metrics.
mpi 2 "$bin" run --out "$out/run" --quiet --sizes 64K --matrix-bytes 64K --fusion off,4M \
    --trials 2 --warmup 1 --memory-budget 128M --resolution 32 >/dev/null 2>&1 || fail "a short run failed"
header=$(head -n 1 "$out/run/results.csv")
[ -n "$header" ] || fail "no header written"
for col in $(echo "$header" | tr ',' ' '); do
    grep -q "^| \`$col\` |" "$schema" || fail "column '$col' is not documented in SCHEMA.md"
done
for metric in $(csv_awk '{ print v("metric") }' "$out/run/results.csv" | sort -u); do
    grep -q "\`$metric\`" "$schema" || fail "metric '$metric' is not documented in SCHEMA.md"
done
finish
