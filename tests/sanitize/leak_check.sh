#!/bin/sh
# LeakSanitizer still sees our leaks in an MPI program of the sanitizer build: Open MPI's own
# allocations in MPI_Init, MPI_Finalize and its threads are untracked (mpi_untracked.c), which
# must hide nothing else. leak_check_alive leaks one block in a place of ours (before MPI_Init,
# after it on the main thread, on a thread we start, after MPI_Finalize) and each run must stop
# with LeakSanitizer's report naming the leaking function and size; the run that leaks nothing
# must be clean, or Open MPI's leaks are showing again. The leaking jobs run with LeakSanitizer's
# exit code 0: a rank stopping with 86 makes mpirun kill the other in the middle of its own
# check; one job on one rank checks that a leak still fails the process.
#   leak_check.sh PROGRAM
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
prog=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# check MODE [FUNCTION BYTES]: one job of 2 ranks; with FUNCTION, every rank's report names it
check() {
    before=$fails
    if [ $# = 1 ]; then
        mpi 2 "$prog" "$1" >"$work/out" 2>"$work/err"
        rc=$?
        [ "$rc" = 0 ] || fail "$1: exit $rc, expected 0"
        [ -z "$(sanitizer_reports "$work/err")" ] || { fail "$1: a report where nothing of ours leaks:"; sed -n '1,40p' "$work/err" >&2; }
        return
    fi
    LSAN_OPTIONS="${LSAN_OPTIONS:-}:exitcode=0" mpi 2 "$prog" "$1" >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" = 0 ] || fail "$1: exit $rc, expected 0 (LeakSanitizer's exit code set to 0)"
    n=$(grep -c "ERROR: LeakSanitizer: detected memory leaks" "$work/err")
    [ "$n" = 2 ] || { fail "$1: $n ranks reported a leak, expected 2"; sed -n '1,40p' "$work/err" >&2; }
    r=$(grep -c "Direct leak of $3 byte(s) in 1 object(s)" "$work/err")
    [ "$r" = 2 ] || fail "$1: $r reports of the $3-byte block, expected 2"
    f=$(grep -c " in $2 " "$work/err")
    [ "$f" -ge 2 ] || fail "$1: the reports do not name $2 on both ranks"
    # ours is the only leak reported: nothing of Open MPI's shows
    o=$(grep -c "^Direct leak\|^Indirect leak" "$work/err")
    [ "$o" = 2 ] || { fail "$1: $o leaks reported, expected our 2:"; grep -A3 "leak of" "$work/err" >&2; }
    [ "$fails" != "$before" ] || echo "$1: each rank reports its $3-byte block from $2"
}
check none
check main fb_leak_in_main 4242
check thread fb_leak_in_thread 4343
check before fb_leak_in_main 4242
check finalized fb_leak_in_main 4242
# a leak fails the process (86, the build's exit code for a sanitizer's stop)
mpi 1 "$prog" main >"$work/out" 2>"$work/err"
rc=$?
[ "$rc" = 86 ] || fail "main on one rank: exit $rc, expected 86"
grep -q "Direct leak of 4242 byte(s)" "$work/err" || fail "main on one rank: no report of the block"
finish
