#!/bin/sh
# The README's main job on the host backend passes its own profile with nothing skipped, and its
# h2d reaches past the last-level cache. The quick run's own arguments (FB_QUICK_HOST, read from
# harness/scripts/quickstart.sh) and launch (sweep: 2 ranks, bound to cores), for the benchmarks
# profiles/host-ci.ini judges (h2d, allreduce); then:
# - accept with host-ci: every check PASS, no SKIP line, h2d's series past the cache judged
#   against the memcpy calibration the run says it ran;
# - h2d has a size past env.json's host.llc_bytes (the next power of two >= 2x) in the all-ranks
#   case, and the headline marks the host bandwidths from buffers inside the cache, not that one,
#   and shows that one's share of its expected figure.
. "$(dirname "$0")/lib.sh"
bin=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
quick=$(sed -n 's/^: "\${FB_QUICK_HOST:=\(.*\)}"$/\1/p' "$src/harness/scripts/quickstart.sh")
case "$quick" in
*" --"*) ;;
*) fail "no FB_QUICK_HOST in quickstart.sh: '$quick'"; finish ;;
esac
opts="--${quick#* --}" # the quick run's options, without its list of benchmarks
# FB_QUICK_OUT=DIR keeps the sweep's folder there (it must not exist), to look at afterwards
base=${FB_QUICK_OUT:-$work/q}
# measure TRY: the quick run's sweep into $out, judged by accept with host-ci into $work/acc.out;
# $rc is accept's exit code
measure() {
    out=$base
    [ "$1" = 1 ] || out=$base.$1
    # shellcheck disable=SC2086
    "$bin" sweep --np 2 --binding core --mpirun-arg --oversubscribe --no-report --out "$out" -- \
        h2d allreduce $opts >"$work/sweep.log" 2>&1 ||
        { tail -n 30 "$work/sweep.log" >&2; fail "the quick run's sweep failed"; finish; }
    run=$(dirname "$(ls "$out"/*/results.csv "$out"/results.csv 2>/dev/null | head -n 1)")
    [ -f "$run/results.csv" ] || { fail "no results.csv under $out: $(ls -R "$out" | head)"; finish; }
    # 1. host-ci judges every check, nothing skipped; the floors pass (the spread check may FAIL on
    # a loaded machine: that is a verdict, not a skip)
    "$bin" accept --profile "$src/profiles/host-ci.ini" "$run" >"$work/acc.out" 2>&1
    rc=$?
}
measure 1
# The h2d series past the cache are judged at 0.25 x the memcpy calibration (best of 5, taken in
# the run's first seconds) on the medians of copies that share this machine's 2 CPUs with the
# suite's other tests: beside 2 busy loops they read 30-44% of it, beside 3 (more than this
# test's neighbours are allowed, yet reached when several of them poll at once) 11-25%
# (2026-12-06, docs/testing.md round sixteen). When
# those are the only checks that failed, the run is measured once more, as a user on a busy node
# would; the second run must pass them all (a copy path that is slow in itself fails both).
if [ "$rc" = 1 ] && ! grep -E '^[a-z_0-9.]+ +FAIL' "$work/acc.out" | grep -Evq '^expected\.h2d\.'; then
    echo "the first run's h2d fell below its floor beside the suite's other tests; measured again:"
    grep -E '^expected\.h2d\.[a-z_0-9.]+ +FAIL' "$work/acc.out"
    measure 2
fi
cat "$work/acc.out"
[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "accept --profile host-ci exited $rc"
# one variant (nothing varies): named default (docs/sweep.md)
grep -qx "# fabricbench sweep: launch 1 of 1, variant default" "$run/launch.txt" ||
    fail "the quick run's launch.txt: $(head -n 1 "$run/launch.txt")"
# the profile's 4 checks, and the 12 of h2d's series past the cache with an expected figure
# (memcpy calibrated before the run: 4 cases x 2 ranks and their total, host-ci's share 0.25)
grep -q "^summary: .* 0 SKIP of 16 checks" "$work/acc.out" || fail "accept's summary: $(grep summary "$work/acc.out")"
grep -Eq '^[a-z_0-9.]+ +SKIP' "$work/acc.out" && fail "a check was skipped: $(grep -E ' SKIP ' "$work/acc.out")"
for c in run_complete h2d_pinned_all 'allreduce_busbw\.4194304\.2'; do
    grep -Eq "^$c +PASS" "$work/acc.out" || fail "$c did not PASS"
done
[ "$(grep -Ec '^expected\.h2d\.(pinned|pageable)_(h2d|d2h)\.(rank[01]|2ranks) +PASS .* >= 0\.25 x [0-9.]+ GB/s \(memcpy calibration [0-9]+ MiB best of 5\)' "$work/acc.out")" = 12 ] ||
    fail "accept does not judge h2d's 12 series against the memcpy calibration: $(grep '^expected' "$work/acc.out")"
grep -q "expected figures: memcpy calibrated on every rank, [0-9]* MiB" "$run/fabricbench.log" ||
    fail "the run does not say it calibrated memcpy"
# docs/expected.md quotes the line (run calibrates the judged rows' own size on every kind of VM)
grep -o "expected figures: memcpy calibrated.*" "$run/fabricbench.log" >"$work/calibration.txt"
doc_example docs/expected.md calibration-line "$work/calibration.txt"

# 2. a size past the last-level cache, and the headline's cache marks
llc=$(sed -n 's/.*"llc_bytes":[[:space:]]*\([0-9.e+]*\).*/\1/p' "$run/env.json" | head -n 1)
[ -n "$llc" ] || fail "env.json records no host.llc_bytes"
if [ -n "$llc" ] && [ "$(printf '%.0f' "$llc")" -gt 0 ]; then
    big=$(awk -v l="$llc" 'BEGIN { s = 1; while (s < 2 * l) s *= 2; printf "%.0f", s }')
    n=$(csv_awk 'v("bench") == "h2d" && v("bytes") == big && v("src") == "" && v("metric") == "bandwidth_total" { n++ } END { print n + 0 }' big="$big" "$run/results.csv")
    [ "$n" = 4 ] || fail "h2d at $big bytes (past the $llc-byte cache), all ranks: $n rows, expected 4 (one per case)"
    # the calibration copied the judged rows' own size (64 MiB at least), not a cache's worth
    cal=$(sed -n 's/.*memcpy calibrated on every rank, \([0-9]*\) MiB.*/\1/p' "$run/fabricbench.log" | head -n 1)
    want=$((big > 67108864 ? big / 1048576 : 64))
    [ "$cal" = "$want" ] || fail "memcpy calibrated ${cal:-no} MiB, expected the judged rows' $want MiB"
    log=$run/fabricbench.log
    sed -n '/^headline/,/^$/p' "$log" >"$work/headline"
    cat "$work/headline"
    grep -q "^  (in cache): the buffer fits in the .* last-level cache (hwloc): a cache figure, not memory" \
        "$work/headline" || fail "the headline has no cache note"
    grep -Eq '^  allreduce .* 4M busbw .*GB/s \(in cache\)$' "$work/headline" ||
        fail "the 4M all-reduce busbw is not marked as in cache"
    grep -E '^  h2d .* all +[0-9]+[KMG] bandwidth_total' "$work/headline" | grep -q "(in cache)" &&
        fail "an h2d row past the cache is marked in cache"
    # the README's quick start ends with the headline showing each h2d figure past the cache as a
    # share of its expected figure
    [ "$(grep -Ec '^  h2d .* all +[0-9]+[KMG] bandwidth_total +[0-9.]+ GB/s: [0-9]+% of [0-9.]+ GB/s \(memcpy calibration [0-9]+ MiB best of 5\)$' "$work/headline")" = 4 ] ||
        fail "the headline's h2d rows past the cache do not show their share of the expected figure"
    # README's quick start quotes these rows
    doc_example README.md quick-headline "$work/headline"
else
    echo "hwloc sees no cache here: the size past it and the marks are not checked"
fi
finish
