#!/bin/sh
# soak on 2 host ranks with a fake sysfs tree (FB_SYSFS_ROOT, a copy of tests/data/sysfs) and
# the fake NVML (FAKE_NVML_HEALTH): untouched, it is healthy (exit 0) and writes soak.csv and
# health.csv for every interval; counters bumped mid-soak make it degraded (exit 1), naming the
# rank, host, interval and counter, the interval being the first whose health.csv row shows the
# new value; a GPU link at x8 of x16 is named once. The figure's rule is kept out of the way
# here (--tolerance 1e9: this machine's noise is not under test; test_soak_rule and
# cluster_soak_rate judge figures). A point of long iterations fits its interval (trials and
# warm-up sized to it), or soak says it cannot.
# usage: soak.sh FABRICBENCH SYSFS_TREE FAKE_NVML
. "$(dirname "$0")/lib.sh"
bin=$1 tree=$2 fake=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
export FB_NVML_LIBRARY="$fake" FAKE_NVML_HEALTH="$work/nvml"
fast="--backend host --sizes 64K --trials 3 --warmup 1 --tolerance 1e9 --quiet"

# soak NAME ARGS...: a soak over a fresh copy of the tree in $work/NAME.sys, into $work/NAME
soak() {
    name=$1; shift
    rm -rf "$work/$name.sys" && cp -a "$tree" "$work/$name.sys"
    FB_SYSFS_ROOT="$work/$name.sys" timeout 150 "${MPIEXEC:-mpirun}" --oversubscribe -np 2 \
        "$bin" soak "$@" $fast --out "$work/$name" >"$work/$name.out" 2>"$work/$name.err"
}
# rows NAME PROGRAM: awk over NAME's health.csv with columns by name
rows() { name=$1 prog=$2; shift 2; csv_awk "$prog" "$@" "$work/$name/health.csv"; }

# ---- 1. untouched: healthy ----------------------------------------------------------------
: >"$work/nvml"
soak calm --duration 5 --interval 1
rc=$?
[ "$rc" = 0 ] || fail "untouched soak exited $rc: $(tail -n 5 "$work/calm.err" "$work/calm.out")"
grep -q "^soak: healthy: 5 interval(s)" "$work/calm.out" || fail "no healthy verdict: $(tail -n 3 "$work/calm.out")"
! grep -q "degraded" "$work/calm.out" || fail "untouched soak says degraded: $(grep degraded "$work/calm.out")"
for f in soak.csv health.csv results.csv env.json; do
    [ -s "$work/calm/$f" ] || fail "untouched soak wrote no $f"
done
[ "$(head -n 1 "$work/calm/soak.csv")" = "interval,start_s,rank,host,bench,case,ranks,bytes,iters,time_median_us,time_min_us,time_max_us,algbw_gbps,busbw_gbps,baseline_us,limit_us,verdict" ] ||
    fail "soak.csv header: $(head -n 1 "$work/calm/soak.csv")"
# every interval: rank 0, rank 1 and the point's row, for each of allreduce's two cases
n=$(csv_awk '$1 >= 1 && $1 <= 5 && $5 == "allreduce" && v("ranks") == 2 && v("bytes") == 65536 { n++ } END { print n + 0 }' "$work/calm/soak.csv")
[ "$n" = 30 ] || fail "soak.csv holds $n rows of intervals 1-5, expected 30 (5 x 2 cases x 3)"
v=$(csv_awk 'v("rank") == "all" { printf "%s:%s ", v("interval"), v("verdict") }' "$work/calm/soak.csv")
case $v in "1:baseline 1:baseline 2:baseline 2:baseline 3:baseline 3:baseline 4:ok 4:ok 5:ok 5:ok ") ;;
    *) fail "soak.csv verdicts: $v" ;; esac
# health.csv: intervals 0-5; sysfs read by one rank per node (rank 0 here), NVML by both
[ "$(head -n 1 "$work/calm/health.csv")" = "interval,rank,host,source,device,counter,value,delta,max,finding" ] ||
    fail "health.csv header: $(head -n 1 "$work/calm/health.csv")"
got=$(rows calm '{ k = v("interval") ":" v("rank") ":" v("source"); if (!(k in seen)) { seen[k]; printf "%s ", k } }')
want="0:0:ib 0:0:pcie 0:0:nvml 0:1:nvml "
for i in 1 2 3 4 5; do want="$want$i:0:ib $i:0:pcie $i:0:nvml $i:1:nvml "; done
[ "$got" = "$want" ] || fail "health.csv rows by interval:rank:source are '$got', expected '$want'"
moved=$(rows calm 'v("finding") != "" { n++ } END { print n + 0 }')
[ "$moved" = 0 ] || fail "untouched health.csv has $moved findings"
rows calm 'v("counter") == "rate_gbps" && v("value") != 100 { bad = 1 } END { exit bad }' ||
    fail "health.csv rate is not the tree's 100 Gb/s"

# ---- 1b. one rank: a collective in place moves nothing; timed, never judged ----------------
# (its tiny time, doubled by a hiccup, once made a healthy 1-rank soak "degraded"). Two
# ranks with --ranks 1,2: the one-rank points of a larger job are those of a one-rank job (the
# rule once read the job's size), and the two-rank points beside them are judged.
rm -rf "$work/one.sys" && cp -a "$tree" "$work/one.sys"
FB_SYSFS_ROOT="$work/one.sys" timeout 150 "${MPIEXEC:-mpirun}" --oversubscribe -np 2 "$bin" soak \
    --duration 4 --interval 1 --ranks 1,2 $fast --out "$work/one" >"$work/one.out" 2>"$work/one.err"
rc=$?
[ "$rc" = 0 ] || fail "--ranks 1,2 soak exited $rc: $(tail -n 5 "$work/one.err" "$work/one.out")"
v=$(csv_awk 'v("rank") == "all" && v("ranks") == 1 { printf "%s:%s:%s:%s ", v("interval"), v("case"),
    v("verdict"), v("limit_us") }' "$work/one/soak.csv")
want=""
for i in 1 2 3 4; do
    vo=baseline; [ "$i" = 4 ] && vo=ok
    want="$want$i:out_of_place:$vo:X $i:in_place:not_judged: "
done
got=$(echo "$v" | sed 's/:out_of_place:\(baseline\|ok\):[^ :]*/:out_of_place:\1:X/g')
[ "$got" = "$want" ] || fail "one-rank points' soak.csv verdicts: '$v', expected '$want' (X: any limit)"
# the two-rank points: judged from interval 4, both cases
n=$(csv_awk 'v("rank") == "all" && v("ranks") == 2 && v("interval") == 4 && v("limit_us") != "" &&
    v("verdict") == "ok" { n++ } END { print n + 0 }' "$work/one/soak.csv")
[ "$n" = 2 ] || fail "the two-rank points were not judged in interval 4: $(csv_awk 'v("ranks") == 2 && v("rank") == "all" { print v("interval"), v("case"), v("verdict") }' "$work/one/soak.csv")"
# a collective on one rank crosses no fabric: no algbw or busbw, as the run's rows have none
# (issue 29); its time is there; the two-rank points have both
bw=$(csv_awk '(v("ranks") == 1) == (v("algbw_gbps") != "" || v("busbw_gbps") != "") || v("time_median_us") == "" { n++ } END { print n + 0 }' "$work/one/soak.csv")
[ "$bw" = 0 ] || fail "--ranks 1,2 soak.csv: $bw rows with a bandwidth on one rank, none on two, or no time"
[ "$(csv_awk 'v("ranks") == 2 && v("rank") != "all" { n++ } END { print n + 0 }' "$work/one/soak.csv")" = 16 ] ||
    fail "the two-rank points have no row for each rank and interval"

# ---- 2. counters bumped mid-soak: InfiniBand symbol errors, NVML ECC and XID; a throttle
# reason (software thermal, 0x20) comes on, then goes off: a mask, judged bit by bit ----------
: >"$work/nvml"
(   # after interval 2's health rows are written, bump the counters; after interval 4's, the
    # thermal slowdown ends
    for _ in $(seq 1 600); do
        grep -q '^2,' "$work/bumped/health.csv" 2>/dev/null && break
        sleep 0.1
    done
    echo 7 >"$work/bumped.sys/class/infiniband/mlx5_0/ports/1/counters/symbol_error"
    printf 'ecc_uncorrected 2\nxid 1\nthrottle 32\n' >"$work/nvml.new" && mv "$work/nvml.new" "$work/nvml"
    for _ in $(seq 1 600); do
        grep -q '^4,' "$work/bumped/health.csv" 2>/dev/null && break
        sleep 0.1
    done
    printf 'ecc_uncorrected 2\nxid 1\n' >"$work/nvml.new" && mv "$work/nvml.new" "$work/nvml"
) &
bumper=$!
soak bumped --duration 6 --interval 1
rc=$?
wait "$bumper"
[ "$rc" = 1 ] || fail "bumped soak exited $rc, expected 1: $(tail -n 5 "$work/bumped.err" "$work/bumped.out")"
grep -q "^soak: DEGRADED: " "$work/bumped.out" || fail "no DEGRADED verdict: $(tail -n 3 "$work/bumped.out")"
host=$(rows bumped 'NR == 2 { print v("host") }')
# the interval named is the first whose row shows the new value, with the change in delta
first=$(rows bumped 'v("counter") == "symbol_error" && v("value") == 7 { print v("interval"); exit }')
[ -n "$first" ] && [ "$first" -ge 3 ] || fail "symbol_error reached 7 at interval '$first' (bumped after 2)"
rows bumped 'v("interval") == i && v("counter") == "symbol_error" && !(v("delta") == 7 && v("finding") == "moved") { bad = 1 } END { exit bad }' i="$first" ||
    fail "health.csv interval $first: symbol_error's delta is not 7 and moved"
grep -qx "soak: degraded: rank 0 on $host, interval $first: ib mlx5_0/1 symbol_error rose by 7 (0 -> 7)" "$work/bumped.out" ||
    fail "no line naming rank 0, $host, interval $first, symbol_error: $(grep degraded "$work/bumped.out")"
for r in 0 1; do
    i=$(rows bumped 'v("rank") == r && v("counter") == "ecc_volatile_uncorrected" && v("value") == 2 { print v("interval"); exit }' r=$r)
    grep -qx "soak: degraded: rank $r on $host, interval $i: nvml gpu$r ecc_volatile_uncorrected rose by 2 (0 -> 2)" "$work/bumped.out" ||
        fail "no ECC line for rank $r at interval '$i': $(grep degraded "$work/bumped.out")"
    i=$(rows bumped 'v("rank") == r && v("counter") == "xid_events" && v("value") == 1 { print v("interval"); exit }' r=$r)
    grep -qx "soak: degraded: rank $r on $host, interval $i: nvml gpu$r xid_events rose by 1 (0 -> 1)" "$work/bumped.out" ||
        fail "no XID line for rank $r at interval '$i': $(grep degraded "$work/bumped.out")"
done
# the mask: a bit that came on is named with both masks (device 1 has hardware thermal, 0x40,
# from the start); the bit going off is in health.csv's delta and is no finding (it is not a
# count that fell by 32)
for r in 0 1; do
    was=0x0 now=0x20
    [ "$r" = 1 ] && was=0x40 now=0x60
    i=$(rows bumped 'v("rank") == r && v("counter") == "throttle_bad_reasons" && v("delta") == "set 0x20" && v("finding") == "moved" { print v("interval"); exit }' r=$r)
    grep -qx "soak: degraded: rank $r on $host, interval $i: nvml gpu$r throttle_bad_reasons: set 0x20 ($was -> $now)" "$work/bumped.out" ||
        fail "no throttle line for rank $r at interval '$i': $(grep degraded "$work/bumped.out")"
    j=$(rows bumped 'v("rank") == r && v("counter") == "throttle_bad_reasons" && v("delta") == "cleared 0x20" && v("finding") == "" { print v("interval"); exit }' r=$r)
    [ -n "$j" ] && [ -n "$i" ] && [ "$j" -gt "$i" ] ||
        fail "rank $r: no health.csv row after interval '$i' with the throttle bit cleared and no finding"
done
grep "^soak: degraded: .*throttle_bad_reasons" "$work/bumped.out" | grep -v ": set 0x20 (" &&
    fail "a throttle line other than the bit coming on"
n=$(grep -c "^soak: degraded: " "$work/bumped.out")
[ "$n" = 7 ] || fail "$n degraded lines, expected 7 (symbol_error, ECC, XID and the throttle bit on 2 ranks): $(grep degraded "$work/bumped.out")"

# ---- 3. a GPU link trained down to x8 of x16: named once, from interval 0 -------------------
: >"$work/nvml"
rm -rf "$work/x8.sys"
soak_x8() {
    rm -rf "$work/x8.sys" && cp -a "$tree" "$work/x8.sys" &&
        echo 8 >"$work/x8.sys/bus/pci/devices/0000:3b:00.0/current_link_width"
    FB_SYSFS_ROOT="$work/x8.sys" timeout 150 "${MPIEXEC:-mpirun}" --oversubscribe -np 2 \
        "$bin" soak --duration 4 --interval 1 $fast --out "$work/x8" >"$work/x8.out" 2>"$work/x8.err"
}
soak_x8
rc=$?
[ "$rc" = 1 ] || fail "x8 soak exited $rc, expected 1: $(tail -n 5 "$work/x8.err")"
grep -qx "soak: degraded: rank 0 on $host, interval 0: pcie 0000:3b:00.0 link_width is 8, below its max 16" "$work/x8.out" ||
    fail "x8 link not named: $(grep degraded "$work/x8.out")"
n=$(grep -c "^soak: degraded: " "$work/x8.out")
[ "$n" = 1 ] || fail "$n degraded lines for one x8 link, expected 1"
n=$(rows x8 'v("finding") == "below_max" { n++ } END { print n + 0 }')
[ "$n" = 5 ] || fail "health.csv marks the x8 link below_max $n times, expected 5 (intervals 0-4)"

# ---- 4. a rank hangs: the watchdog ends the soak with exit 3; stopped mid-soak (SIGTERM to
# mpirun, which ends the ranks), every finished interval is on disk --------------------------------------------------------
: >"$work/nvml"
cp -a "$tree" "$work/hang.sys"
FB_SYSFS_ROOT="$work/hang.sys" FB_TEST_HANG="1:allreduce:trial 2" timeout 120 \
    "${MPIEXEC:-mpirun}" --oversubscribe -np 2 "$bin" soak --duration 10 --interval 1 $fast \
    --timeout 4 --out "$work/hang" >"$work/hang.out" 2>"$work/hang.err"
rc=$?
[ "$rc" = 3 ] || fail "a hung rank: soak exited $rc, expected 3: $(tail -n 3 "$work/hang.err")"
grep -q '"run_status":[[:space:]]*"timeout"' "$work/hang/env.json" || fail "env.json of the hung soak does not say timeout"
grep -q '^0,0,' "$work/hang/health.csv" || fail "the hung soak lost health.csv's interval 0"
cp -a "$tree" "$work/term.sys"
FB_SYSFS_ROOT="$work/term.sys" timeout 120 "${MPIEXEC:-mpirun}" --oversubscribe -np 2 "$bin" soak \
    --duration 60 --interval 1 $fast --out "$work/term" >"$work/term.out" 2>"$work/term.err" &
soaker=$!
for _ in $(seq 1 600); do
    grep -q '^2,' "$work/term/health.csv" 2>/dev/null && break
    sleep 0.1
done
kill -TERM "$soaker"
wait "$soaker"
rc=$?
[ "$rc" != 0 ] || fail "a soak stopped with SIGTERM exited 0"
n=$(csv_awk 'v("rank") == "all" && v("interval") <= 2 && NF == 17 { n++ } END { print n + 0 }' "$work/term/soak.csv")
[ "$n" = 4 ] || fail "a stopped soak's soak.csv holds $n whole point rows of intervals 1-2, expected 4"
tail -c 1 "$work/term/health.csv" | od -c | grep -q '\\n' || fail "a stopped soak's health.csv ends mid-line"

# ---- 5. a point of long iterations fits its interval (issue 28) -----------------------------
# Every iteration of rank 0 sleeps 50 ms (FB_TEST_SLOW_RANK): 2 points of 0.1 s each iteration
# together. At --trials' and --warmup's defaults (10, 5) an interval took (5 + 1 + 10 + 10) x 0.1
# = 2.6 s, so a 4 s soak ran about 10 s; now the first interval runs 3 trials after 1 warm-up
# (0.8 s), and the others as many as fit 80% of it: the 4th interval starts at 3 s on time (it
# began at 7.9 s before, 2026-12-04). With 150 ms
# sleeps (0.3 s a round) not even one trial (3 rounds with calibration's and the one timed
# alone) fits 80% of a 1 s interval: soak says so, once.
slow() {
    name=$1 us=$2; shift 2
    FB_TEST_SLOW_RANK=0:$us timeout 120 "${MPIEXEC:-mpirun}" --oversubscribe -np 2 "$bin" soak \
        --duration 4 --interval 1 --backend host --sizes 4K --tolerance 1e9 --quiet \
        --out "$work/$name" "$@" >"$work/$name.out" 2>"$work/$name.err"
}
slow fits 50000 || fail "the slow soak failed: $(tail -n 3 "$work/fits.err")"
starts=$(csv_awk 'v("rank") == "all" && v("case") == "out_of_place" { printf "%s:%s ", v("interval"), v("start_s") }' "$work/fits/soak.csv")
last=$(csv_awk 'v("rank") == "all" && v("interval") == 4 { print v("start_s"); exit }' "$work/fits/soak.csv")
second=$(csv_awk 'v("rank") == "all" && v("interval") == 2 { print v("start_s"); exit }' "$work/fits/soak.csv")
# on time: 3 s (the old fit, 7.9). The first interval holds the point's set-up, which took up to
# 1.3 s more on a loaded machine (2026-12-07, whole suites: interval 2 began at 2.13 and 2.27 s):
# it gets 2 s of slack. Intervals 2 and 3, fitted to 80% of theirs, take 1 s each on time and
# 2.6 s with the old fit; beside the suite's busiest minutes the two took 3.1 s (1.15 and 1.95;
# 2026-12-07, docs/testing.md round twenty):
# they get 4.2 s, half way between that and the old fit's 5.2
[ -n "$last" ] && [ -n "$second" ] &&
    [ "$(awk -v l="$last" -v s="$second" 'BEGIN { print (s <= 3 && l - s <= 4.2) }')" = 1 ] ||
    fail "a slow point's soak ran late (interval:start_s, on time 1:0 2:1 3:2 4:3): $starts"
n=$(csv_awk 'v("rank") == "all" { n++ } END { print n + 0 }' "$work/fits/soak.csv")
[ "$n" = 8 ] || fail "the slow soak wrote $n point rows, expected 8 (2 points x 4 intervals)"
grep -q "warning: soak: the interval" "$work/fits.err" && fail "the fitting soak warned: $(cat "$work/fits.err")"
slow tight 150000 || fail "the too-slow soak failed: $(tail -n 3 "$work/tight.err")"
[ "$(grep -c "warning: soak: the interval's 2 point(s) take about [0-9.]* s (1 trial(s) of one iteration each" "$work/tight.err")" = 1 ] ||
    fail "a point that cannot fit its interval is not said once: $(grep warning "$work/tight.err")"

# ---- 6. bad usage: one line, exit 2, nothing written ----------------------------------------
expect_error "soak: --duration is required" "$bin" soak --backend host
expect_error "soak: --duration 3 s with --interval 1 s gives 3 interval(s)" "$bin" soak --duration 3 --interval 1
expect_error "soak: bad value for --interval" "$bin" soak --duration 10 --interval x
expect_error "soak: soak times a point; 'memfit' reports figures" "$bin" soak --duration 10 --interval 1 memfit
expect_error "soak: unknown option '--bogus'" "$bin" soak --duration 10 --interval 1 --bogus
# a plan too big for an interval is known once the job is up, and refused before any folder
expect_error "soak: allreduce plans 34 points per interval, more than 16: name one size with --sizes" \
    "$bin" soak --duration 10 --interval 1 --backend host allreduce --min-bytes 4 --max-bytes 256K
[ ! -e results ] || fail "a refused soak made a results folder"
# a --timeout under a second is said as given (it read "--timeout 0 s", the value for none)
expect_error "soak: --timeout 0.4 s is not longer than --interval 0.5 s" \
    "$bin" soak --duration 2 --interval 0.5 --timeout 0.4 --backend host
finish
