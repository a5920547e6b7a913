#!/bin/sh
# memfit on host, 2 ranks: the confirmed batch really fits the budget (fixed + batch x per image
# <= budget, one more image does not), agrees with the estimate within page rounding, uses most
# of the budget; a budget below the fixed part fits no batch.
. "$(dirname "$0")/../lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mpi 2 "$bin" run --backend host --out "$work/r" --resolution 64 --memory-budget 256M \
    --optimizer momentum memfit >"$work/out.txt" 2>&1 || fail "memfit run failed: $(tail -5 "$work/out.txt")"
csv="$work/r/results.csv"
val() { csv_awk 'v("bench") == "memfit" && v("metric") == m && v("src") == "" { print v("median") }' m="$1" "$csv"; }
est=$(val batch_estimate); max=$(val batch_max); per=$(val bytes_per_image); fixed=$(val bytes_fixed)
budget=$(val budget); frac=$(val memory_fraction); held=$(val bytes_max)
[ -n "$max" ] || fail "no batch_max row"
[ "$budget" = 268435456 ] || fail "budget is $budget, expected 268435456"
awk -v m="$max" -v e="$est" -v p="$per" -v f="$fixed" -v b="$budget" -v fr="$frac" -v h="$held" 'BEGIN {
    bad = 0
    if (m < 1) { print "no batch fits"; bad = 1 }
    if (f + m * p > b) { print "batch " m " does not fit: " f " + " m " x " p " > " b; bad = 1 }
    if (f + (m + 1) * p <= b && m == e) { print "one more image would still fit"; bad = 1 }
    if (m > e || m < e - 1) { print "confirmed " m " is not the estimate " e " (or one less)"; bad = 1 }
    if (h != f + m * p) { print "held " h " is not fixed + batch x per image"; bad = 1 }
    if (fr <= 0.8 || fr > 1) { print "memory_fraction " fr " not in (0.8, 1]"; bad = 1 }
    exit bad }' || fail "memfit figures do not hold together"
# both ranks answered for themselves
[ "$(csv_awk 'v("metric") == "batch_max" && v("src") != "" { n++ } END { print n + 0 }' "$csv")" = 2 ] ||
    fail "not one batch_max row per rank"

"$bin" run --backend host --out "$work/small" --memory-budget 64M memfit >"$work/small.txt" 2>&1 ||
    fail "memfit with a small budget failed: $(tail -3 "$work/small.txt")"
[ "$(csv_awk 'v("metric") == "batch_max" { print v("median") }' "$work/small/results.csv")" = 0 ] ||
    fail "a budget below the weights and optimizer state fits a batch"

finish
