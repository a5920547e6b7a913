#!/bin/sh
# Progress lines of `run` under mpirun -np 2: rank 0 prints "[k/N] bench case size who | m:ss
# elapsed, ~m:ss left" on stderr for every point, k going 1..N with N the whole run's plan
# (h2d, then allreduce on each group of its scaling curve), N equal to the points in
# results.csv; none on stdout or in the run's log; none with --quiet.
. "$(dirname "$0")/../lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
args="h2d allreduce --backend host --max-bytes 64K --trials 2 --warmup 1 --trial-ms 1"

# shellcheck disable=SC2086
mpi 2 "$bin" run $args --out "$work/run" >"$work/stdout" 2>"$work/stderr"
rc=$?
[ "$rc" = 0 ] || { cat "$work/stderr" >&2; fail "run exited $rc"; finish; }
grep -E '^\[ *[0-9]+/[0-9]+\] ' "$work/stderr" >"$work/lines"
# A point's own time row: every rank's point (src empty) or one rank alone (ranks 1); the
# per-rank shares of an all-ranks point (ranks 2, src set) are not points.
points=$(csv_awk 'v("metric") == "time" && (v("src") == "" || v("ranks") == 1) { n++ } END { print n + 0 }' "$work/run/results.csv")
# h2d: 3 sizes (4K, 16K, 64K) x 4 variants x (each of 2 ranks alone + all at once) = 36;
# allreduce: 14 sizes (8 B .. 64K) x 2 cases x 2 groups (1 and 2 ranks) = 56
[ "$points" = 92 ] || fail "results.csv has $points points, expected 92"
awk -v want="$points" '
{
    match($0, /^\[ *[0-9]+\//); k = substr($0, 2, RLENGTH - 2) + 0
    rest = substr($0, RLENGTH + 1); n = substr(rest, 1, index(rest, "]") - 1) + 0
    lines++
    if (k != lines) { print "FAIL: line " lines " counts " k > "/dev/stderr"; bad++ }
    if (n != want) { print "FAIL: line " lines " total " n ", expected " want > "/dev/stderr"; bad++ }
    if ($0 !~ / \| [0-9]+:[0-9][0-9] elapsed, ~([0-9]+:[0-9][0-9]|\?) left$/) { print "FAIL: format: " $0 > "/dev/stderr"; bad++ }
    if (lines == 1 && $0 !~ /~\? left$/) { print "FAIL: an estimate before any point ended: " $0 > "/dev/stderr"; bad++ }
    if (lines > 1 && $0 ~ /~\? left$/) { print "FAIL: no estimate after points ended: " $0 > "/dev/stderr"; bad++ }
}
END {
    if (lines != want) { print "FAIL: " lines " progress lines, expected " want > "/dev/stderr"; bad++ }
    exit bad ? 1 : 0
}' "$work/lines" || fail "progress lines do not count 1..$points"
# what each line names: h2d first (rank 0 alone at 4K), allreduce last on both ranks at 64K
first=$(head -n 1 "$work/lines") last=$(tail -n 1 "$work/lines")
case "$first" in *"] h2d pinned_h2d 4K rank 0 |"*) ;; *) fail "first line: $first" ;; esac
case "$last" in *"] allreduce in_place 64K x2 ranks |"*) ;; *) fail "last line: $last" ;; esac
grep -q "allreduce out_of_place 8 x1 rank |" "$work/lines" || fail "no line for allreduce on the 1-rank group"
# the estimate is the mean per point of the same benchmark: never more than the whole run
# would take at the slowest point so far, checked loosely - it must be finite and not absurd
awk '{ if (match($0, /~[0-9]+:[0-9][0-9] left/)) { split(substr($0, RSTART + 1, RLENGTH - 6), t, ":"); if (t[1] * 60 + t[2] > 3600) bad++ } } END { exit bad ? 1 : 0 }' "$work/lines" ||
    fail "an estimate above an hour for a run of seconds"
# terminal only: not in stdout, not in the log
if grep -Eq '^\[ *[0-9]+/[0-9]+\]' "$work/stdout"; then fail "progress lines on stdout"; fi
if grep -Eq '^\[ *[0-9]+/[0-9]+\]' "$work/run/fabricbench.log"; then fail "progress lines in fabricbench.log"; fi
# only rank 0 prints them
n=$(wc -l <"$work/lines")
[ "$n" = "$points" ] || fail "$n lines: another rank printed too?"

# --quiet: none
# shellcheck disable=SC2086
mpi 2 "$bin" run $args --quiet --out "$work/quiet" >"$work/stdout" 2>"$work/stderr" || fail "quiet run failed"
if grep -Eq '^\[ *[0-9]+/[0-9]+\]' "$work/stderr"; then fail "progress lines despite --quiet"; fi
finish
