#!/bin/sh
# gpu-check's budget known before the GPU (issue 29): FB_CHECK_DRY_RUN describes an H200 (989
# TFLOP/s, 4800 GB/s, 141G) and every step is planned with the real fabricbench: its `run` steps
# by `run --dry-run` (the floor of their plans on host-strict with that device memory), memfit for
# real at 141G (its batch sizes the step), the rest by their typical time. The check passes
# with every step inside its limit and the plans inside the 480 s budget; the pipeline at its
# old settings (every one of 16 cores, 10 trials, three consumer rates: over a minute of a
# spinning GPU) passes its limit and fails the check, as do plans past the budget; a
# malformed description is refused.
#   gpu_check_dry_run.sh GPU_CHECK_SH FABRICBENCH
. "$(dirname "$0")/lib.sh"
script=$1 bin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
h200=989,4800,141G

FB_BIN=$bin FB_CHECK_DRY_RUN=$h200 OUT=$work/ok sh "$script" >"$work/ok.txt" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "the dry run for an H200 exited $rc: $(tail -5 "$work/ok.txt")"
steps=$work/ok/steps.tsv
for s in versions doctor run p2p collectives replay soak test_conv_gemm test_pool_kernels \
    test_conv_engine_cuda pipeline train-fp16 train-bf16 memfit fit torch-copy torch-fp16 \
    torch-bf16; do
    awk -F'\t' -v s="$s" '$1 == s && $2 == 0 && $4 ~ /^planned [0-9]+s \(.*\) of its [0-9]+s limit$/ { ok = 1 }
        END { exit !ok }' "$steps" || fail "step $s is not planned inside its limit: $(grep "^$s	" "$steps")"
done
# the fabricbench steps show their run's floor; the pipeline's at its new settings is seconds
for s in run p2p collectives replay pipeline train-fp16 train-bf16 fit; do
    grep -q "^$s	0	[0-9]*	planned [0-9]*s (floor of its run's plans)" "$steps" ||
        fail "step $s has no floor from its run's plans: $(grep "^$s	" "$steps")"
done
pipe=$(awk -F'\t' '$1 == "pipeline" { print $3 }' "$steps")
[ -n "$pipe" ] && [ "$pipe" -ge 1 ] && [ "$pipe" -le 20 ] ||
    fail "the sized pipeline plans ${pipe:-nothing}s, expected 1-20 (2 trials x 2 rates x 8 rounds of 256 images)"
# memfit ran for real at 141G: the model's 1,119 fp16 images, and the step planned at that batch
b=$(csv_awk 'v("metric") == "batch_max" && v("src") == "" { print v("median") }' "$work/ok/memfit-results.csv")
[ "$b" = 1119 ] || fail "memfit at 141G (fp16, SGD momentum) found batch '$b', expected 1119"
grep -q "^plan step 1 points at least" "$work/ok/fit.txt" || fail "the fit step planned nothing: $(cat "$work/ok/fit.txt")"
total=$(sed -n 's/^gpu-check: dry run: the steps plan \([0-9]*\)s of the 480s budget.*/\1/p' "$work/ok.txt")
sum=$(awk -F'\t' '{ s += $3 } END { print s }' "$steps")
[ -n "$total" ] && [ "$total" = "$sum" ] && [ "$total" -le 480 ] ||
    fail "the plans' sum '$total' (steps.tsv: $sum) is not within the 480 s budget"

# the pipeline at its old settings (the slowest rate alone spins the GPU for over a minute), and
# a budget of 150 s, which the plans then pass: both said, exit 1
FB_BIN=$bin FB_CHECK_DRY_RUN=$h200 FB_CHECK_PIPELINE_OPTS="--threads 16 --batch 32" \
    FB_CHECK_BUDGET_S=150 OUT=$work/old sh "$script" >"$work/old.txt" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "the old pipeline settings: exit $rc, expected 1"
awk -F'\t' '$1 == "pipeline" && $3 > 60 && $4 ~ /past its 60s limit$/ { ok = 1 } END { exit !ok }' \
    "$work/old/steps.tsv" || fail "the old pipeline is not planned past its limit: $(grep "^pipeline" "$work/old/steps.tsv")"
grep -q "gpu-check: dry run: the plans ([0-9]*s) pass the 150s budget" "$work/old.txt" ||
    fail "the budget's excess is not said: $(tail -3 "$work/old.txt")"

FB_BIN=$bin FB_CHECK_DRY_RUN=989,4800 OUT=$work/bad sh "$script" >"$work/bad.txt" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "a description without the memory: exit $rc, expected 2"
grep -q "FB_CHECK_DRY_RUN must be TFLOPS,GBPS,MEMORY" "$work/bad.txt" || fail "bad description: $(cat "$work/bad.txt")"
finish
