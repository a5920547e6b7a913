#!/bin/sh
# `fabricbench trend` over real runs: 8 runs of h2d where the machine changes from run 5 on (the
# job is put under a CPU quota of a quarter of a core, and NCCL_PROTO is set so the fingerprint
# differs too) must show a step at run 5 and only there in the pinned copies' series, labelled
# with the NCCL_PROTO change, and exit 1 (the latest run sits past a worse step); the 4 runs
# before the change, alone, must show no step in them and exit 0. Root with a cgroup cpu
# controller (v1 or v2); skipped (77) with the reason otherwise. Usage: trend.sh FABRICBENCH
# With a second argument `ranks` (the test trend_ranks, which need not run alone): trend.csv's key
# cells tell the per-rank series of 2-rank runs apart.
# In two parts, so that only the part a neighbour would move runs alone: `trend.sh BIN base DIR`
# makes the 4 runs before the change into DIR (the test trend_host_base, RUN_SERIAL: a neighbour
# moves an unthrottled copy by 2x); `trend.sh BIN step DIR` makes the 4 throttled runs beside the
# other tests (the quota holds them at a quarter of a core: 4.3-4.9 GB/s alone, 4.5-5.2 GB/s with
# two memory-bound neighbours on both CPUs; both read on 2026-12-04, docs/testing.md) and judges
# all 8 (trend_host). Without a part, both.
. "$(dirname "$0")/lib.sh"
bin=$1
tmp=$(mktemp -d)
cg=""
cleanup() {
    [ -n "$cg" ] && rmdir "$cg" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT; [ -n "${FB_KEEP:-}" ] && trap - EXIT && echo "kept $tmp"
if [ "${2:-}" = ranks ]; then
    # trend.csv's key cells tell per-rank series apart: four 2-rank h2d runs (each rank's share,
    # src 0 and 1) give no two rows with the same key and run
    mkdir "$tmp/ranks"
    for i in 1 2 3 4; do
        mpirun --oversubscribe -np 2 "$bin" run h2d --backend host --sizes 1M --trial-ms 5 --trials 3 \
            --quiet --out "$tmp/ranks/run$i" >"$tmp/ranks$i.log" 2>&1 || fail "2-rank run $i failed"
    done
    "$bin" trend --out "$tmp/trend-ranks" "$tmp/ranks" >"$tmp/ranks.out" 2>&1
    [ $? -le 1 ] || fail "trend over 2-rank runs: $(cat "$tmp/ranks.out")"
    dup=$(csv_awk '{ k = v("bench") "|" v("case") "|" v("backend") "|" v("transport") "|" v("dtype") "|" \
            v("bytes") "|" v("batch") "|" v("ranks") "|" v("nodes") "|" v("src") "|" v("dst") "|" \
            v("metric") "|" v("run"); if (seen[k]++) print k }' "$tmp/trend-ranks/trend.csv" | head -3)
    [ -z "$dup" ] || fail "trend.csv rows whose key cells and run are the same: $dup"
    n=$(csv_awk 'v("case") == "pinned_h2d" && v("metric") == "bandwidth" && v("run") == 1 { print v("src") }' \
        "$tmp/trend-ranks/trend.csv" | sort | tr '\n' ' ')
    case " $n" in *" 0 1 "*) ;; *) fail "pinned_h2d bandwidth at run 1: src cells '$n', expected 0 and 1 among them" ;; esac
    # h2d is about no batch: its batch cells are empty, as in results.csv (they once read -1)
    b=$(csv_awk 'v("batch") != "" { n++ } END { print n + 0 }' "$tmp/trend-ranks/trend.csv")
    [ "$b" = 0 ] || fail "$b trend.csv rows of h2d have a batch: $(csv_awk 'v("batch") != "" { print v("batch"); exit }' "$tmp/trend-ranks/trend.csv")"
    finish
fi
# one rank: nothing to yield to; and the two parts' runs (one alone, one beside the others, whose
# environments differ in this) must differ in NCCL_PROTO alone
unset OMPI_MCA_mpi_yield_when_idle
part=${2:-all} runs=${3:-}
case $part in
all) runs=$tmp/base ;;
base | step) [ -n "$runs" ] || { echo "trend.sh: $part needs a folder for the runs" >&2; exit 2; } ;;
*) echo "trend.sh: the part is base or step, not '$part'" >&2; exit 2 ;;
esac
if [ -d /sys/fs/cgroup/cpu ] && mkdir "/sys/fs/cgroup/cpu/fb-trend.$$" 2>/dev/null; then
    cg=/sys/fs/cgroup/cpu/fb-trend.$$
    echo 10000 >"$cg/cpu.cfs_period_us" && echo 2500 >"$cg/cpu.cfs_quota_us" || cg=""
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers &&
     mkdir "/sys/fs/cgroup/fb-trend.$$" 2>/dev/null; then
    cg=/sys/fs/cgroup/fb-trend.$$
    echo "2500 10000" >"$cg/cpu.max" || cg=""
fi
[ -n "$cg" ] || { echo "skipped: no cgroup cpu controller to write here (needs root)"; exit 77; }

# run OUT [throttled]: one h2d run at 64 MiB (above the last-level cache: a copy at 4 MiB changes
# level by 30% between runs of one machine with its cache and page luck, CI on 2026-12-01), one
# rank, bound to a core; trials of 40 ms span several of the quota's 10 ms periods, so a throttled
# trial cannot fit inside one.
h2d="run h2d --sizes 64M --trial-ms 40 --trials 7"
run() {
    if [ "${2:-}" = throttled ]; then
        NCCL_PROTO=Simple sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" \
            mpirun --oversubscribe -np 1 --bind-to core "$bin" $h2d --out "$1" >"$1.log" 2>&1
    else
        mpirun --oversubscribe -np 1 --bind-to core "$bin" $h2d --out "$1" >"$1.log" 2>&1
    fi || fail "run $1 failed: $(tail -n 3 "$1.log")"
}
if [ "$part" != step ]; then
    rm -rf "$runs" && mkdir -p "$runs" || { fail "cannot make '$runs'"; finish; }
    for i in 1 2 3 4; do run "$runs/run$i"; done
    [ "$part" = base ] && finish
fi
for i in 1 2 3 4; do
    [ -f "$runs/run$i/results.csv" ] || { fail "no run $i before the change in '$runs' (trend_host_base makes them)"; finish; }
done
mkdir "$tmp/step" "$tmp/flat"
for i in 1 2 3 4; do cp -R "$runs/run$i" "$tmp/step/run$i"; done
for i in 5 6 7 8; do run "$tmp/step/run$i" throttled; done
# The flat series: the four runs before the change, the same machine four times (copies of their
# folders: trend reads a folder of runs).
for i in 1 2 3 4; do cp -R "$tmp/step/run$i" "$tmp/flat/run$i"; done

# --threshold 60: this machine's copies drift up to 49% between runs with nothing changed (a level
# held for two runs is a step at 5%, rightly; CI on 2026-12-07 saw the four runs before the change,
# each alone, read 8.6, 8.6, 12.3, 12.3 GB/s, a step of 43% at run 3 that failed this test at its
# old threshold of 30, and testing.md's round seven throttled runs rise 49%); the imposed change
# is a drop of 74-81% (x0.19-0.26 in that CI run), 14 points past 60, as the noise is 11 under it.
(cd "$tmp" && "$bin" trend --threshold 60 --out "$tmp/trend-step" step) >"$tmp/step.out" 2>&1
rc=$?
cat "$tmp/step.out"
[ "$rc" = 1 ] || fail "trend over the changed machine: exit $rc, expected 1"
series=$(awk -F, 'NR > 1 { print $1 }' "$tmp/trend-step/trend.csv" | sort -u | wc -l)
[ "$series" -ge 2 ] || fail "trend.csv holds $series series, expected the h2d cases"
# The pinned copies (memcpy between two allocated buffers) step at run 5 and at no other run.
# The pageable copies are shown, not judged: their runs carry page-fault and allocation noise
# (one unthrottled run in a few reads at the throttled level), so their steps may fall a run off.
for c in pinned_h2d pinned_d2h; do
    steps=$(csv_awk 'v("case") == c && v("step") == 1 { print v("run") }' c="$c" \
        "$tmp/trend-step/trend.csv")
    [ "$steps" = 5 ] || fail "$c: steps at run(s) '$(echo $steps)', expected at run 5 only"
done
# the step names its run by the folder given (step/run5), not by the run id alone (issue 32)
grep -q "at run 5 (step/run5); changed: environment.NCCL_PROTO: (absent) -> Simple" "$tmp/step.out" ||
    fail "the step is not labelled with its folder and the NCCL_PROTO change"
grep -q "latest run step/run8: DEGRADED" "$tmp/step.out" || fail "the verdict does not name the latest run's folder"
grep -q '^| 5 | `step/run5` | `' "$tmp/trend-step/trend.md" || fail "trend.md's run table lacks the folders"
grep -q "OMPI_FILE_LOCATION\|orte_local_daemon_uri" "$tmp/step.out" &&
    fail "a volatile fingerprint entry labels a step"
grep -q "DEGRADED" "$tmp/step.out" || fail "the verdict does not say DEGRADED"
[ -f "$tmp/trend-step/trend.md" ] && grep -q "step at run 5" "$tmp/trend-step/trend.md" ||
    fail "trend.md lacks the step"
if command -v gnuplot >/dev/null; then
    [ -s "$tmp/trend-step/trend-0.png" ] && [ -s "$tmp/trend-step/trend-0.svg" ] ||
        fail "no plot drawn: $(ls "$tmp/trend-step")"
fi

"$bin" trend --threshold 60 --out "$tmp/trend-flat" --no-plots "$tmp/flat" >"$tmp/flat.out" 2>&1
rc=$?
cat "$tmp/flat.out"
[ "$rc" = 0 ] || fail "trend over one machine: exit $rc, expected 0"
grep -q "^STEP h2d pinned" "$tmp/flat.out" && fail "a step in a flat pinned series"
[ ! -e "$tmp/trend-flat/trend-0.gp" ] || fail "--no-plots wrote a plot script"

# Bad input: too few runs, an output folder inside a run, a bad threshold.
"$bin" trend "$tmp/flat/run1" "$tmp/flat/run2" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" = 2 ] && grep -q "needs at least 4" "$tmp/err" || fail "2 runs: exit $rc: $(cat "$tmp/err")"
# a folder that is not there is named, under trend's own name, before the count is judged
(cd "$tmp" && expect_error "trend: cannot open run folder '$tmp/nope': No such file or directory" \
    "$bin" trend "$tmp/flat/run1" "$tmp/nope")
"$bin" trend --out "$tmp/flat/run1/trend" "$tmp/flat" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" = 2 ] && grep -q "inside a run folder" "$tmp/err" ||
    fail "--out in a run: exit $rc: $(cat "$tmp/err")"
(cd "$tmp" && "$bin" trend --threshold 0x5 "$tmp/flat") >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" = 2 ] && grep -q "threshold" "$tmp/err" || fail "--threshold 0x5: exit $rc"
# a "started" that is there but no time: named, not a silent fall back to another order
cp -a "$tmp/flat" "$tmp/badtime"
sed -i 's/"started":[[:space:]]*"[^"]*"/"started": "2026-12-07T22:09:43Z junk"/' "$tmp/badtime/run2/env.json"
grep -q 'Z junk' "$tmp/badtime/run2/env.json" || fail "the test could not edit run2's env.json"
(cd "$tmp" && expect_error "trend: $tmp/badtime/run2/env.json: 'started' is not a time like 2026-12-07T22:09:43Z (UTC)" \
    "$bin" trend --no-plots --out "$tmp/o-badtime" "$tmp/badtime")
# an interrupted run is read with a warning in trend's own terms (it spoke of summary.md)
cp -a "$tmp/flat" "$tmp/cut"
sed -i 's/"run_status":[[:space:]]*"[^"]*"/"run_status": "interrupted"/' "$tmp/cut/run2/env.json"
"$bin" trend --no-plots --out "$tmp/o-cut" "$tmp/cut" >/dev/null 2>"$tmp/err"
grep -q "trend: run folder '$tmp/cut/run2' is incomplete (.*); its series hold its finished points only" "$tmp/err" ||
    fail "an interrupted run's warning: $(cat "$tmp/err")"
# a folder where the last plot script goes: refused before anything is written or printed
mkdir -p "$tmp/blocked/trend-1.gp"
(cd "$tmp" && "$bin" trend --threshold 60 --out "$tmp/blocked" step) >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] && [ "$(cat "$tmp/err")" = "fabricbench: error: trend: cannot use output file '$tmp/blocked/trend-1.gp': it exists and is a folder" ] ||
    fail "a folder in the way of a plot: exit $rc: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "a folder in the way of a plot: printed '$(head -n 2 "$tmp/out")'"
[ "$(ls "$tmp/blocked")" = trend-1.gp ] || fail "a folder in the way of a plot: wrote $(ls "$tmp/blocked")"
ln -s "$tmp" "$tmp/link"
"$bin" trend --out "$tmp/link" "$tmp/flat" >/dev/null 2>"$tmp/err"; rc=$?
[ "$rc" = 2 ] && grep -q "symbolic link" "$tmp/err" ||
    fail "--out LINK: exit $rc: $(cat "$tmp/err")"
finish
