#!/bin/sh
# The sanitizer build's host suite: every benchmark in one run under mpirun -np 2, short options,
# with AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer halting on the first
# report (their options come from CTest, tests/sanitize/sanitize.cmake). Clean means: exit 0, no
# report from any rank, every benchmark's rows present with nothing wrong, the run complete. Then
# a short soak of replay, whose trials change between intervals.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run="$work/run"

# shellcheck disable=SC2086 # the option lists are word lists
mpi 2 "$bin" run $FB_ALL_BENCHES $FB_SHORT_OPTIONS --out "$run" >"$work/stdout" 2>"$work/stderr"
rc=$?
reports=$(sanitizer_reports "$work/stderr")
[ -z "$reports" ] || { cat "$work/stderr" >&2; fail "sanitizer reports: $(echo "$reports" | head -5)"; }
[ "$rc" = 0 ] || { tail -n 30 "$work/stderr" >&2; fail "run exited $rc"; finish; }
suite_checks "$run"

# A soak of a benchmark with per-trial figures (replay), whose trials soak raises after its first
# interval (3, then up to --trials): the runner's gathered trials were sized once, for 3, and the
# next interval wrote past them (heap-buffer-overflow, issue 28's soak fitting).
mixes=$(cd "$(dirname "$0")/../../profiles/mixes" && pwd)
mpi 2 "$bin" soak --duration 4 --interval 1 --backend host --tolerance 1e9 --quiet \
    --out "$work/soak" replay --mix "$mixes/densenet121-horovod.mix" --scale 0.001 \
    >"$work/soak.out" 2>"$work/soak.err"
rc=$?
reports=$(sanitizer_reports "$work/soak.err")
[ -z "$reports" ] || fail "soak replay: sanitizer reports: $(echo "$reports" | head -5)"
[ "$rc" = 0 ] || fail "soak replay exited $rc: $(tail -n 5 "$work/soak.err")"
# This tree is built without CUDA: --backend cuda is bad usage here (exit 2, one line), not a
# node without its GPU (exit 1)
mpi 2 "$bin" run allreduce --backend cuda --out "$work/cuda" >"$work/cuda.out" 2>"$work/cuda.err"
rc=$?
[ "$rc" = 2 ] && [ "$(grep -c 'error: ' "$work/cuda.err")" = 1 ] &&
    grep -q "backend 'cuda' asked for, but this fabricbench was built without CUDA" "$work/cuda.err" ||
    fail "--backend cuda in a build without CUDA: exit $rc, $(head -n 3 "$work/cuda.err")"
finish
