#!/bin/sh
# Every benchmark under --backend host-strict (CUDA's rules enforced on a CPU: docs/strict.md),
# mpirun -np 2, short options: clean means exit 0, no strict error, every benchmark's rows
# there with nothing wrong, and the figures marked as not measurements (env.json, stdout,
# summary.md, no headline). Then defect 1 of issue 14 put back (FB_REPLAY=compute-stream: the
# DenseNet step keeps the first case's stream) must be caught, naming the benchmark and hook.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sanitize/lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run="$work/run"
opts=$(echo "$FB_SHORT_OPTIONS" | sed 's/--backend host /--backend host-strict /')
case "$opts" in *host-strict*) ;; *) fail "the short options name no host backend to replace"; finish ;; esac

# shellcheck disable=SC2086 # the option lists are word lists
mpi 2 "$bin" run $FB_ALL_BENCHES $opts --out "$run" >"$work/stdout" 2>"$work/stderr"
rc=$?
[ "$rc" = 0 ] || { tail -n 30 "$work/stderr" >&2; fail "run exited $rc"; finish; }
! grep -q "strict:" "$work/stderr" || fail "strict errors: $(grep "strict:" "$work/stderr" | head -3)"
suite_checks "$run"
grep -Eq '"note":[[:space:]]*"host-strict: figures are not measurements"' "$run/env.json" ||
    fail "env.json does not say the figures are not measurements"
grep -q "^host-strict: figures are not measurements" "$work/stdout" || fail "stdout does not say it"
! grep -q "^headline" "$work/stdout" || fail "stdout has a headline table"
"$bin" report "$run" >"$work/report.out" 2>&1 || fail "report exited $?: $(tail -n 3 "$work/report.out")"
md="$run/summary.md"
grep -q "host-strict: figures are not measurements" "$md" || fail "summary.md does not say it"
grep -q "No headline: host-strict" "$md" || fail "summary.md has headline figures"

# defect 1 put back: compute enqueues on the first case's stream, destroyed with that case
# shellcheck disable=SC2086
FB_REPLAY=compute-stream mpi 2 -x FB_REPLAY "$bin" run compute $opts --out "$work/replay" \
    >"$work/replay.out" 2>"$work/replay.err"
rc=$?
[ "$rc" != 0 ] || fail "the stale stream of compute went unnoticed (exit 0)"
grep -Eq "strict: compute (iterate|setup|timing): stream [0-9]+ used after destroy" "$work/replay.err" ||
    fail "no strict error naming compute's stale stream: $(grep error "$work/replay.err" | head -3)"
finish
