#!/bin/sh
# The sanitizer build's host suite: every benchmark in one run under mpirun -np 2, short options,
# with AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer halting on the first
# report (their options come from CTest, tests/sanitize/sanitize.cmake). Clean means: exit 0, no
# report from any rank, every benchmark's rows present with nothing wrong, the run complete.
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
finish
