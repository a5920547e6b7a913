#!/bin/sh
# run --timing (issue 18): collectives timed OSU's way beside the batch figure. With a test-only
# delay on rank 1 (FB_TEST_SLOW_RANK=1:D, every iteration of rank 1 sleeps D us in the runner
# before the benchmark's call) at 2 ranks, on the host backend, where the synced figure is the
# MPI call's own span (coll.h): rank 0 waits D inside its call for rank 1, and rank 1's call,
# made last, is short, its sleep not in it. So time_synced_max is about D above time_synced_min;
# time_synced_avg is halfway, exactly (min + max) / 2 in every trial (so in the means); the
# batch `time`, each trial as long as its slowest rank with iterations back to back, is about D.
# Under host-strict, where MPI's call is staged through pinned memory (its copies part of it),
# the runner's own clock reads around the iteration stand: rank 1's sleep is inside them too, so
# time_synced_min is about D as well.
# --timing synced alone writes no batch rows (time, algbw, busbw, time_iter); the default writes
# no synced ones; bad values of --timing, and --timing on soak, are one line and exit 2.
# usage: timing_synced.sh FABRICBENCH
. "$(dirname "$0")/../lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
d=10000 # microseconds: far above a 4 KiB all-gather on 2 ranks and a loaded machine's hiccups
opts="--backend host --sizes 4K --ranks 2 --trials 3 --iters 10 --warmup 1 --quiet"

# shellcheck disable=SC2086 # the option list is a word list
FB_TEST_SLOW_RANK=1:$d mpi 2 -x FB_TEST_SLOW_RANK "$bin" run all_gather $opts --timing both \
    --out "$work/both" >"$work/both.out" 2>"$work/both.err"
rc=$?
[ "$rc" = 0 ] || { fail "--timing both exited $rc: $(tail -n 5 "$work/both.err")"; finish; }
csv_awk '
v("ranks") == 2 {
    m = v("metric"); k = v("case")
    med[k, m] = v("median"); mean[k, m] = v("mean"); cases[k] = 1
    if (m ~ /^time_synced_/) {
        nsynced++
        if (v("samples") != 3 || v("iters") != 10 || v("wrong") != "0" || v("unit") != "us")
            print k " " m ": samples " v("samples") ", iters " v("iters") ", wrong " v("wrong") \
                ", unit " v("unit")
    }
}
END {
    for (k in cases) {
        n++
        lo = med[k, "time_synced_min"]; hi = med[k, "time_synced_max"]
        avg = med[k, "time_synced_avg"]; batch = med[k, "time"]
        if (!(lo < d / 2)) print k ": time_synced_min " lo " us: the fast rank is not far below " d
        if (!(hi >= 0.9 * d && hi < 3 * d))
            print k ": time_synced_max " hi " us: the slow rank, not about " d
        if (!(avg > 0.45 * d && avg < hi)) print k ": time_synced_avg " avg " us: not about halfway"
        half = (mean[k, "time_synced_min"] + mean[k, "time_synced_max"]) / 2
        diff = mean[k, "time_synced_avg"] - half
        if (diff > 0.01 || diff < -0.01)
            print k ": mean of time_synced_avg " mean[k, "time_synced_avg"] \
                " is not (min + max) / 2 = " half
        if (!(batch >= 0.95 * d)) print k ": batch time " batch " us: not the slow rank, about " d
    }
    if (n != 2) print n + 0 " cases on 2 ranks, expected 2 (out_of_place, in_place)"
    if (nsynced != 6) print nsynced + 0 " time_synced rows, expected 6"
}' d="$d" "$work/both/results.csv" >"$work/bad"
[ ! -s "$work/bad" ] || fail "--timing both: $(cat "$work/bad")"
n=$(grep -c "^out_of_place .*synced: min [0-9.]* max [0-9.]*$" "$work/both.out")
[ "$n" = 1 ] ||
    fail "$n synced lines for out_of_place on stdout, expected 1: $(cat "$work/both.out")"
grep -q "^# --timing both: a .synced:. line per point" "$work/both.out" ||
    fail "the table does not say how its synced lines were timed"

# allreduce, the other FB_ONE_CALL benchmark: its span too (the late rank's call short)
# shellcheck disable=SC2086
FB_TEST_SLOW_RANK=1:$d mpi 2 -x FB_TEST_SLOW_RANK "$bin" run allreduce $opts --timing synced \
    --out "$work/ar" >/dev/null 2>"$work/ar.err" ||
    fail "allreduce --timing synced exited $?: $(tail -n 3 "$work/ar.err")"
csv_awk '
v("ranks") == 2 && v("metric") ~ /^time_synced_m/ { n++; m[v("case"), v("metric")] = v("median") }
END {
    for (k in m) {
        split(k, p, SUBSEP)
        if (p[2] == "time_synced_min" && !(m[k] < d / 2))
            print "allreduce " p[1] ": time_synced_min " m[k] " us: the late rank'"'"'s call is " \
                "not short (no call span?)"
        if (p[2] == "time_synced_max" && !(m[k] >= 0.9 * d && m[k] < 3 * d))
            print "allreduce " p[1] ": time_synced_max " m[k] " us: not about " d
    }
    if (n != 4) print n + 0 " allreduce min and max rows on 2 ranks, expected 4"
}' d="$d" "$work/ar/results.csv" >"$work/bad"
[ ! -s "$work/bad" ] || fail "allreduce --timing synced: $(cat "$work/bad")"

# staged (host-strict): no call span, the runner's reads: both ranks about D
# shellcheck disable=SC2086
FB_TEST_SLOW_RANK=1:$d mpi 2 -x FB_TEST_SLOW_RANK "$bin" run all_gather \
    $(echo "$opts" | sed 's/--backend host /--backend host-strict /') --timing synced \
    --out "$work/strict" >/dev/null 2>"$work/strict.err" ||
    fail "--timing synced under host-strict exited $?: $(tail -n 3 "$work/strict.err")"
csv_awk '
v("ranks") == 2 && v("metric") == "time_synced_min" {
    n++
    if (!(v("median") >= 0.9 * d && v("median") < 3 * d))
        print v("case") ": time_synced_min " v("median") " us staged: not about " d " (the " \
            "runner'"'"'s reads, rank 1'"'"'s sleep inside them)"
}
END { if (n != 2) print n + 0 " time_synced_min rows on 2 ranks under host-strict, expected 2" }
' d="$d" "$work/strict/results.csv" >"$work/bad"
[ ! -s "$work/bad" ] || fail "--timing synced, host-strict: $(cat "$work/bad")"

# --timing synced alone: only the synced rows for a collective; the default: none of them
# shellcheck disable=SC2086
mpi 2 "$bin" run alltoall $opts --timing synced --out "$work/synced" >/dev/null 2>"$work/s.err" ||
    fail "--timing synced exited $?: $(tail -n 3 "$work/s.err")"
got=$(csv_awk '{ print v("metric") }' "$work/synced/results.csv" | sort -u | tr '\n' ' ')
[ "$got" = "time_synced_avg time_synced_max time_synced_min " ] ||
    fail "--timing synced wrote metrics '$got', expected the three time_synced_* alone"
# shellcheck disable=SC2086
mpi 2 "$bin" run alltoall $opts --out "$work/batch" >/dev/null 2>"$work/b.err" ||
    fail "the default timing exited $?: $(tail -n 3 "$work/b.err")"
! grep -q "time_synced" "$work/batch/results.csv" || fail "the default timing wrote synced rows"
grep -q ",time," "$work/batch/results.csv" || fail "the default timing wrote no time rows"

# bad values: one line, exit 2, nothing written
expect_bad "bad value for --timing: 'osu' is not one of the choices (use batch, synced, both)" \
    run all_gather --timing osu --out "$work/never"
expect_bad "bad value for --timing: '' is not one of the choices" run --timing ''
expect_bad "option '--timing' needs a value" run all_gather --timing
expect_error "soak: --timing synced is run's; soak times in batches" \
    "$bin" soak --duration 10 --interval 1 --timing synced
[ ! -e "$work/never" ] && [ ! -e results ] || fail "a refused --timing wrote a run folder"
finish
