#!/bin/sh
# all_gather, reduce_scatter, alltoall, broadcast and reduce on host under mpirun -np N
# (issue 18): every point at 1 and N ranks with its rows, nothing wrong, the size and count as
# nccl-tests gives them (size = the biggest buffer, count = elements per block), busbw / algbw =
# (N-1)/N for the first three and 1 for broadcast and reduce, time only on one rank, and the
# stdout table's root column. With a third argument `replay`, the defect FB_REPLAY=
# collective-short (each block one element short) must be caught: every point wrong, exit 1,
# and the closing count of failed points right.
. "$(dirname "$0")/../lib.sh"
bin=$1
np=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
benches="all_gather reduce_scatter alltoall broadcast reduce"
opts="--backend host --trials 2 --warmup 1 --iters 4 --quiet"

if [ "${3:-}" = replay ]; then
    # shellcheck disable=SC2086 # the option lists are word lists
    FB_REPLAY=collective-short mpi "$np" -x FB_REPLAY "$bin" run $benches $opts --sizes 4K \
        --ranks "$np" --out "$work/run" >"$work/stdout" 2>"$work/stderr"
    rc=$?
    [ "$rc" = 1 ] || fail "a short collective ended with exit $rc, expected 1"
    # 9 points: in and out of place of each, alltoall out of place only
    grep -q "error: 9 point(s) failed verification" "$work/stderr" ||
        fail "the closing line does not count 9 failed points:" \
            "$(grep 'failed verif' "$work/stderr")"
    n=$(grep -c "WRONG$" "$work/stdout")
    [ "$n" = 9 ] || fail "$n lines of stdout say WRONG, expected 9"
    csv_awk 'v("metric") == "time" {
                 n[v("bench")]++; if (v("wrong") + 0 <= 0) bad = bad " " v("bench") "/" v("case") }
             END { for (b in n) printf "%s %d\n", b, n[b]; if (bad != "") print "right:" bad }' \
        "$work/run/results.csv" >"$work/wrong"
    for b in $benches; do
        grep -q "^$b " "$work/wrong" || fail "$b has no time row"
    done
    ! grep -q "^right:" "$work/wrong" || fail "points not caught: $(grep '^right:' "$work/wrong")"
    finish
fi

# shellcheck disable=SC2086
mpi "$np" "$bin" run $benches $opts --sizes 64,4K,64K --ranks "1,$np" --out "$work/run" \
    >"$work/stdout" 2>"$work/stderr"
rc=$?
[ "$rc" = 0 ] || { tail -n 20 "$work/stderr" >&2; fail "run exited $rc"; finish; }
csv="$work/run/results.csv"

# Expected per bench: blocks in the size (N or 1), bus factor, cases, redop.
csv_awk '
BEGIN {
    split("all_gather reduce_scatter alltoall broadcast reduce", names, " ")
    per["all_gather"] = "N"; per["reduce_scatter"] = "N"; per["alltoall"] = "N"
    per["broadcast"] = 1; per["reduce"] = 1
    redop["reduce_scatter"] = "sum"; redop["reduce"] = "sum"
    ncase["alltoall"] = 1
}
function bad(where, what) { print where ": " what; nbad++ }
{
    b = v("bench"); c = v("case"); m = v("metric"); k = v("ranks") + 0
    where = b " " c " " v("bytes") " B on " k " rank(s)"
    if (!(b in per)) next
    if (v("wrong") != "0") bad(where, "wrong = " v("wrong"))
    if (v("redop") != redop[b]) bad(where, "redop \"" v("redop") "\"")
    if (v("dtype") != "float32") bad(where, "dtype " v("dtype"))
    p = per[b] == "N" ? k : 1
    if (v("count") * 4 * p != v("bytes")) bad(where, "count " v("count") " is not bytes / 4 / " p)
    if (m == "time") { points[b]++; if (c == "in_place") inplace[b]++ }
    if (k == 1 && (m == "algbw" || m == "busbw")) bad(where, "a bandwidth row on one rank")
    if (k > 1 && m == "algbw") alg[b SUBSEP c SUBSEP v("bytes")] = v("median")
    if (k > 1 && m == "busbw") bus[b SUBSEP c SUBSEP v("bytes")] = v("median")
}
END {
    for (i = 1; i <= 5; i++) {
        b = names[i]
        want = (ncase[b] ? 1 : 2) * 3 * 2   # cases x sizes x rank counts
        if (points[b] != want) bad(b, points[b] + 0 " time rows, expected " want)
        if (ncase[b] && inplace[b]) bad(b, "an in_place case")
    }
    for (key in alg) {
        split(key, f, SUBSEP)
        factor = per[f[1]] == "N" ? (np - 1) / np : 1
        if (!(key in bus)) { bad(f[1] " " f[2] " " f[3], "algbw without busbw"); continue }
        r = bus[key] / alg[key]
        if (r < factor * 0.999 || r > factor * 1.001)
            bad(f[1] " " f[2] " " f[3], "busbw / algbw = " r ", expected " factor)
        nbw++
    }
    if (nbw != 27) bad("bandwidth", nbw + 0 " algbw rows on " np " ranks, expected 27")
    exit nbad > 0
}' np="$np" "$csv" >"$work/bad" || fail "results.csv: $(head -n 5 "$work/bad")"

# Sizes as nccl-tests: 64 B on N ranks is N blocks of 64/4/N floats (all_gather's 64 B at N = 4:
# count 4); broadcast's and reduce's 64 B are 16 floats, from root 0 (reduce's redop sum).
want_ag=$((64 / 4 / np))
grep -Eq "^out_of_place +$np +$((want_ag * 4 * np)) +$want_ag +float32 +- +-1 " "$work/stdout" ||
    fail "no all_gather line of $((want_ag * 4 * np)) B, count $want_ag, root -1"
grep -Eq "^# case +ranks +size +count +type +redop +root +iters +time_us" "$work/stdout" ||
    fail "the table lacks nccl-tests' root column"
grep -Eq "^out_of_place +$np +64 +16 +float32 +- +0 " "$work/stdout" ||
    fail "no broadcast line of 64 B, count 16, no redop, root 0"
grep -Eq "^out_of_place +$np +64 +16 +float32 +sum +0 " "$work/stdout" ||
    fail "no reduce line of 64 B, count 16, root 0"
finish
