#!/bin/sh
# gpu-summary.sh's table of truth from canned check outputs (tests/data/gpu-check): a GPU run
# with some peers absent, and a host-backend run with the kernel tests missing. Each summary.md
# is compared with its golden copy; the rows that matter are checked one by one too.
. "$(dirname "$0")/lib.sh"
script=$1 data=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for case in cuda host; do
    cp -r "$data/$case" "$work/$case"
    rm -f "$work/$case/summary.md.expected"
    sh "$script" "$work/$case" "$case" || fail "$case: gpu-summary.sh exited $?"
    diff -u "$data/$case/summary.md.expected" "$work/$case/summary.md" ||
        fail "$case: summary.md differs from its golden copy"
done
s=$work/cuda/summary.md
grep -qF '| pinned H2D 64 MiB | 52.50 GB/s | 50.00 GB/s (torch copy_) | 1.05 |' "$s" ||
    fail "H2D 64 MiB is not beside PyTorch's copy with its ratio"
want='| compute fp16 GEMMs alone (step_convs, batch 32) | 300.0 TFLOP/s (implicit-gemm-fp16) |'
grep -qF "$want 400.0 TFLOP/s (cublas-fp16, same shapes: step_ref) | 0.75 |" "$s" ||
    fail "compute is not beside cuBLAS"
want='| DenseNet-121 step fp16 batch 32 | 7155.0 images/s (compute step_ours) |'
grep -qF "$want 2000.0 images/s (torch_densenet_step.py) | 3.58 |" "$s" ||
    fail "the DenseNet step is not beside PyTorch's"
want='| DenseNet-121 step bf16 batch 32 | 6559.0 images/s (compute step_ours) |'
grep -qF "$want not measured: torch-bf16 timed out after 60s | - |" "$s" ||
    fail "an absent peer does not say why"
grep -qF '| self-check test_conv_engine_cuda | FAILED: exit 1 |' "$s" ||
    fail "a failed self-check is not shown"
grep -qF 'a step at batch 612 fits: 1500.5 images/s' "$s" || fail "memfit's batch is not confirmed"
h=$work/host/summary.md
grep -qF '| self-check test_conv_gemm | FAILED: missing:' "$h" ||
    fail "a missing test binary does not fail"
grep -qF '| pinned H2D 1 MiB | 9.50 GB/s | not measured: host backend | - |' "$h" ||
    fail "a host figure's GPU peer is not 'not measured: host backend'"
grep -qF 'NOT confirmed: the step at batch 40 exit 3' "$h" || fail "a failed confirmation passes"
# bad use: exit 2, nothing written
sh "$script" "$work/none" host 2>"$work/err.txt"; rc=$?
[ "$rc" = 2 ] || fail "a missing folder exited $rc, expected 2"
grep -q "'$work/none' is not a folder" "$work/err.txt" ||
    fail "no reason given: $(cat "$work/err.txt")"
finish
