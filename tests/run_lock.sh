#!/bin/sh
# The run lock (docs/run-folder.md): `<out>/.lock` holds the pid and host of the run writing the
# folder. Two `run --force` started at once into one --out: exactly one runs, the other exits 2
# naming the winner's pid and host, and the winner's results.csv is whole. A stale lock (this
# host, no such process) is taken over with a note; a lock of another host, or one that cannot
# be read, stops a run (exit 2) and the folder is left as it was; no lock is left after a run.
. "$(dirname "$0")/lib.sh"
bin=$1
work=$(mktemp -d)
host=$(hostname)
trap 'rm -rf "$work"' EXIT
out=$work/run
args="h2d --backend host --sizes 4K,64K --warmup 1 --trials 10 --trial-ms 30 --quiet --force --out $out"

# two at once
# shellcheck disable=SC2086
{ mpi 1 "$bin" run $args >"$work/a.out" 2>"$work/a.err"; echo $? >"$work/a.rc"; } &
# shellcheck disable=SC2086
{ mpi 1 "$bin" run $args >"$work/b.out" 2>"$work/b.err"; echo $? >"$work/b.rc"; } &
wait
ra=$(cat "$work/a.rc") rb=$(cat "$work/b.rc")
echo "two runs at once into one --out: exit codes $ra and $rb"
case "$ra$rb" in
02) win=a lose=b ;;
20) win=b lose=a ;;
*) fail "exit codes $ra and $rb, expected one 0 and one 2"; cat "$work"/*.err >&2; finish ;;
esac
lines=$(grep -c 'error: ' "$work/$lose.err")
[ "$lines" = 1 ] || fail "the loser printed $lines error lines, expected 1: $(cat "$work/$lose.err")"
grep -Eq "error: '$out' is being written by pid [0-9]+ on $host \(its lock: '$out/.lock'\)" "$work/$lose.err" ||
    fail "the loser does not name the pid and host writing the folder: $(cat "$work/$lose.err")"
want=$(sed -n 's/^results: .*(\([0-9]*\) rows).*/\1/p' "$work/$win.out")
have=$(($(wc -l <"$out/results.csv") - 1))
[ -n "$want" ] && [ "$want" -gt 0 ] || fail "the winner did not say how many rows it wrote"
[ "$have" = "$want" ] || fail "results.csv holds $have rows, the winner wrote $want"
n=$(csv_awk 'v("bench") == "h2d" { n++ } END { print n + 0 }' "$out/results.csv")
[ "$n" = "$want" ] || fail "results.csv holds $n h2d rows of $want"
grep -Eq '"run_status":[[:space:]]*"complete"' "$out/env.json" || fail "the winner's run is not complete"
[ ! -e "$out/.lock" ] || fail "the lock is left after the run: $(cat "$out/.lock")"
ls "$out"/.lock* >/dev/null 2>&1 && fail "lock temporaries are left: $(ls -a "$out")"

# a stale lock: this host, a pid that does not exist
dead=4000000
while kill -0 "$dead" 2>/dev/null; do dead=$((dead + 1)); done
echo "$dead $host" >"$out/.lock"
# shellcheck disable=SC2086
mpi 1 "$bin" run $args >"$work/c.out" 2>"$work/c.err"
rc=$?
[ "$rc" = 0 ] || fail "a run over a stale lock exited $rc: $(cat "$work/c.err")"
grep -q "warning: took over the stale lock of '$out' (pid $dead on $host is gone)" "$work/c.err" ||
    fail "no note of the stale lock taken over: $(cat "$work/c.err")"
[ ! -e "$out/.lock" ] || fail "the lock is left after the run over a stale lock"

# another host's lock, and one that cannot be read: refused, nothing touched
cp "$out/results.csv" "$work/before.csv"
for lock in "4242 another-host" "garbage" "9223372036854775807 $host" "99999999999 $host"; do
    echo "$lock" >"$out/.lock"
    # shellcheck disable=SC2086
    mpi 1 "$bin" run $args >"$work/d.out" 2>"$work/d.err"
    rc=$?
    [ "$rc" = 2 ] || fail "a run over the lock '$lock' exited $rc, expected 2"
    case $lock in
    # a pid past an int (or past a long) is no process's: unreadable, never a live writer
    garbage | 9223372036854775807* | 99999999999*) text="'$out' has a lock that cannot be read ('$out/.lock')" ;;
    *) text="'$out' is being written by pid 4242 on another-host" ;;
    esac
    grep -q "error: $text" "$work/d.err" || fail "the lock '$lock' is not named: $(cat "$work/d.err")"
    cmp -s "$work/before.csv" "$out/results.csv" || fail "results.csv changed under the lock '$lock'"
    [ "$(cat "$out/.lock")" = "$lock" ] || fail "the lock '$lock' was changed"
done

# a FIFO where the lock goes: refused at once as unreadable (it blocked rank 0 until the
# run's timeout, which then named an env.json that did not exist), no temporary left (issue 30)
rm -f "$out/.lock"
mkfifo "$out/.lock"
start=$(date +%s)
# shellcheck disable=SC2086
mpi 1 "$bin" run $args --timeout 30 >"$work/e.out" 2>"$work/e.err"
rc=$?
took=$(($(date +%s) - start))
[ "$rc" = 2 ] || fail "a run over a FIFO lock exited $rc, expected 2: $(cat "$work/e.err")"
grep -q "error: '$out' has a lock that cannot be read ('$out/.lock')" "$work/e.err" ||
    fail "the FIFO lock is not named: $(cat "$work/e.err")"
[ "$took" -lt 20 ] || fail "a run over a FIFO lock took $took s (it waited on the FIFO)"
[ -p "$out/.lock" ] || fail "the FIFO lock was replaced"
left=$(ls -a "$out" | grep '^\.lock\..*\.tmp$')
[ -z "$left" ] || fail "a temporary lock was left behind: $left"
cmp -s "$work/before.csv" "$out/results.csv" || fail "results.csv changed under the FIFO lock"
rm -f "$out/.lock"
finish
