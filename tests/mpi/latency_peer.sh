#!/bin/sh
# 8-byte MPI latency on the host: fabricbench's p2p latency matrix (0 <> 1 over MPI) against an
# independent ping-pong (tests/ref/ref_mpi_pingpong: MPI_Send/MPI_Recv timed in batches with one
# clock pair, as osu_latency does), run alternately 5 times. Each side's figure is its 5th
# percentile over trials. A pair counts when it was quiet: both figures within 2x of their side's
# best of the 5 (on a loaded 2-core machine a run's whole 5th percentile can be the scheduler's:
# 5-10 us against 0.15 on 2026-12-01). The median ratio fabricbench / reference over the quiet pairs
# must be at most 1.10; with fewer than 3 quiet pairs the machine is too busy to judge (exit 77).
# p2p runs at MPI_THREAD_SINGLE (--mpi-thread auto): at serialized Open MPI's per-call lock read
# about 1.15-1.2 here (2026-12-02). This VM has two speeds: at ~0.44 us the ratio reads 0.99-1.03,
# at ~0.13 us 1.05-1.09 (about 10 ns of dispatch per leg: the benchmark's and the collectives' table
# calls and the watchdog's two stores, docs/methodology.md); the limit admits both.
# Sub-microsecond latency on a shared 2-core VM is the scheduler's (both sides read 0.8-2 us under a
# load of 15, 2026-12-01), so the test runs only where FB_QUIET_MACHINE=1 says the machine is idle.
. "$(dirname "$0")/../lib.sh"
bin=$1 ref=$2
[ "${FB_QUIET_MACHINE:-0}" = 1 ] ||
    { echo "skipped: set FB_QUIET_MACHINE=1 on an idle machine to compare 8-byte latencies"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: >"$work/ratios"
for i in 1 2 3 4 5; do
    rm -rf "$work/p2p"
    mpi 2 "$bin" run p2p --backend host --matrix-bytes 4K --sizes 4K --trials 9 --quiet \
        --out "$work/p2p" >"$work/run.log" 2>&1 || { cat "$work/run.log" >&2; fail "p2p failed"; finish; }
    ours=$(csv_awk 'v("case") == "matrix_latency" && v("transport") == "mpi" && v("metric") == "latency" && v("src") == 0 { print v("p05") }' \
        "$work/p2p/results.csv")
    theirs=$(mpi 2 "$ref" 8 20 10000 | awk '{ print $2 }')
    [ -n "$ours" ] && [ -n "$theirs" ] || { fail "no figures: fabricbench '$ours', reference '$theirs'"; finish; }
    echo "8 B latency, 5th percentile: fabricbench $ours us, ref_mpi_pingpong $theirs us"
    echo "$ours $theirs" >>"$work/ratios"
done
verdict=$(awk '{ a[NR] = $1; b[NR] = $2; if (NR == 1 || $1 < ma) ma = $1; if (NR == 1 || $2 < mb) mb = $2 }
END {
    for (i = 1; i <= NR; i++)
        if (a[i] <= 2 * ma && b[i] <= 2 * mb) r[++n] = a[i] / b[i]
    if (n < 3) { printf "busy %d", n; exit }
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
    m = n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
    printf "%.3f %d", m, n
}' "$work/ratios")
case "$verdict" in
busy*) echo "only ${verdict#busy } quiet pair(s) of 5: this machine is too busy to compare latencies"; exit 77 ;;
esac
med=${verdict% *}
echo "median ratio over ${verdict#* } quiet pairs: $med (limit 1.10)"
awk -v m="$med" 'BEGIN { exit !(m <= 1.10) }' || fail "fabricbench's 8-byte latency is $med x the reference's (limit 1.10)"
finish
