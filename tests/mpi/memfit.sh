#!/bin/sh
# memfit on host, 2 ranks: the confirmed batch really fits the budget (fixed + batch x per image
# <= budget, one more image does not), agrees with the estimate within page rounding, uses most
# of the budget; a budget below the fixed part fits no batch.
# With a device memory on host-strict (--device-memory, issue 29), memfit and the step meet one
# capacity through one memory model: at 240M (32x32, fp32) the step runs at memfit's batch_max
# and is out of memory at one image more, naming the capacity; at a 32 GiB V100's (the c4140-m
# profile's gpu_memory, 224x224) memfit's batch is 100-150 fp32 images and twice it fails as
# out of memory naming 32G, before any compute (the step at that batch would need 32 GiB of this
# machine's memory: test_densenet_step allocates it whole on host-strict instead).
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

# --device-memory on host-strict: one capacity for memfit and the step
strict() { "$bin" run --backend host-strict --device-memory "$@"; }
strict 240M --resolution 32 --precision fp32 --optimizer momentum --out "$work/m240" --quiet \
    memfit >"$work/m240.txt" 2>&1 || fail "memfit at 240M failed: $(tail -3 "$work/m240.txt")"
b=$(csv_awk 'v("metric") == "batch_max" && v("src") == "" { print v("median") }' "$work/m240/results.csv")
[ -n "$b" ] && [ "$b" -ge 4 ] || fail "memfit at 240M, 32x32: batch_max '$b', expected 4 or more"
steprun() { # NAME CAPACITY RES BATCH
    strict "$2" --resolution "$3" --precision fp32 --batch "$4" --warmup 1 --trials 2 --iters 1 \
        --out "$work/$1" --quiet step >"$work/$1.txt" 2>&1
}
steprun fit 240M 32 "$b" || fail "the step at memfit's batch $b (240M) failed: $(grep error "$work/fit.txt" | head -3)"
[ "$(csv_awk 'v("bench") == "step" && v("metric") == "images_per_s" { n++ } END { print n + 0 }' \
    "$work/fit/results.csv")" -ge 1 ] || fail "the step at memfit's batch $b measured nothing"
steprun over 240M 32 $((b + 1)) && fail "the step at memfit's batch + 1 ($((b + 1))) fitted in 240M"
grep -q "out of device memory: .* of its 240M capacity" "$work/over.txt" ||
    fail "the step past 240M did not name the capacity: $(grep error "$work/over.txt" | head -2)"
grep -q "step stopped: rank 0 on .*: out of memory" "$work/over.txt" ||
    fail "the step past 240M did not stop as out of memory: $(tail -2 "$work/over.txt")"
strict c4140-m --resolution 224 --precision fp32 --optimizer momentum --out "$work/m32" \
    --quiet memfit >"$work/m32.txt" 2>&1 || fail "memfit at c4140-m failed: $(tail -3 "$work/m32.txt")"
b=$(csv_awk 'v("metric") == "batch_max" && v("src") == "" { print v("median") }' "$work/m32/results.csv")
total=$(csv_awk 'v("metric") == "budget" && v("src") == "" { print v("median") }' "$work/m32/results.csv")
[ "$(awk -v t="$total" 'BEGIN { d = t - 34359738368; print (d < 100 && d > -100) }')" = 1 ] || fail "c4140-m's device memory read as '$total', expected 32G (34359738368)"
[ -n "$b" ] && [ "$b" -ge 100 ] && [ "$b" -le 150 ] ||
    fail "memfit at 32G, 224x224 fp32: batch_max '$b', expected 100-150 (about 270 MB an image)"
steprun twice c4140-m 224 $((2 * b)) && fail "the step at twice memfit's batch fitted in 32G"
grep -q "out of device memory: .* of its 32G capacity" "$work/twice.txt" ||
    fail "the step past 32G did not name the capacity: $(grep error "$work/twice.txt" | head -2)"
strict 1G --backend host --out "$work/h" memfit >"$work/h.txt" 2>&1 &&
    fail "--device-memory on the host backend was accepted"
grep -q "only host-strict takes a capacity" "$work/h.txt" || fail "host + --device-memory: $(tail -1 "$work/h.txt")"
strict nosuch-gpu --out "$work/n" memfit >"$work/n.txt" 2>&1; rc=$?
[ "$rc" = 2 ] && grep -q "'nosuch-gpu' is neither a size nor a profile: no profile named" "$work/n.txt" ||
    fail "an unknown profile for --device-memory: exit $rc: $(tail -1 "$work/n.txt")"
[ ! -e "$work/n" ] || fail "an unknown profile for --device-memory left a run folder"

finish
