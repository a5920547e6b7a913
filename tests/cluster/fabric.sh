#!/bin/sh
# Ground truth for the fabric between two "hosts" (lib.sh): what tc imposes on the veth is what
# fabricbench reads. usage: fabric.sh MODE FABRICBENCH [REF_PINGPONG]
#
# bandwidth  tbf at 800 Mbit/s on both veth ends; 1 rank per host. The inter-node p2p sweep
#            (0>1) at 64 MiB reads within 5% of the payload rate tbf allows. The same run has a
#            sysfs tree (FB_SYSFS_ROOT) describing the veth at 800 Mb/s: its row's expected
#            figure is the model's, it reads 90-103% of it, and `accept` with no profile passes;
#            described at 3200 Mb/s, `expect` names the veth as the bound and a short run is
#            accepted as FAIL naming it (docs/expected.md); summary.md's "Short of the
#            hardware" says none at the true rate and lists that pair, with its bound, at 4x.
#            tbf counts whole frames (Ethernet header, IP and TCP headers, payload; no preamble
#            or FCS), so the MPI payload rate is
#                rate/8 * (MTU - 20 IP - 20 TCP - 12 TCP timestamps) / (MTU + 14 Ethernet)
#            = 100e6 B/s * 1448/1514 = 95.64 MB/s = 0.09564 GB/s at 800 Mbit/s and MTU 1500
#            (MTU and timestamps are read from the namespace, not assumed). ACKs travel the
#            other way; MPI's own headers (tens of bytes per 128 KiB fragment) are below 0.1%.
# matrix     tbf at 100 Mbit/s; 4 ranks, 2 per host: in the one-way matrix over MPI every
#            inter-node pair is slower than every intra-node pair, and the slowest pairs the
#            summary names are network pairs.
# latency    1 rank per host, unshaped: the inter-node one-way latency of p2p (8 B ping-pong,
#            half the round trip) against an independent plain MPI_Send/MPI_Recv ping-pong over
#            the same veth with the same MPI settings (tests/ref/ref_mpi_pingpong.c), within
#            15%. Both take 51 trials of about 1 ms and the 5th percentiles are compared (each
#            side's lowest over the attempts so far): on a shared 2-core machine a preemption
#            costs milliseconds, so medians of microsecond round trips measure the scheduler
#            (both medians are printed).
# delay      netem delay of 2 ms on both veth ends: the one-way latency reads within 5% of
#            2000 us + the unshaped latency. Skipped (77) where the kernel has no netem.
# Each check is tried up to 3 times before it fails (latency: 5, keeping each side's lowest,
# then the medians of the 5 attempts' 5th percentiles, within the same 15%): a
# busy machine only ever slows a transfer below what tbf allows, and never lifts an unshaped
# one into the 5% window.
mode=$1 bin=$2 ref=${3:-}
# Latency: each host on its own CPUs. Two spinning ranks that the scheduler puts on one CPU
# take turns by time slice, and a round trip then reads 10 ms instead of 13 us (seen here,
# 2026-11-30: docs/cluster-tests.md).
case $mode in latency | delay) CL_SPLIT_CPUS=1 ;; esac
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
cluster_up
w=$CL_DIR

min_of() { # min_of A B: the smaller number; an empty one is ignored
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "") print b; else if (b == "") print a; else print (a + 0 < b + 0 ? a : b) }'
}
median_of() { # median_of X...: the median of the numbers given (empty when none)
    printf '%s\n' "$@" | sort -g | awk 'NF { v[n++] = $1 } END { if (n) print (n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) }'
}
within() { # within VALUE EXPECTED FRACTION: prints the ratio; true when inside
    awk -v a="$1" -v b="$2" -v f="$3" 'BEGIN { if (a == "" || b <= 0) { print "none"; exit 1 }
        r = a / b; printf "%.4f", r; exit !(r >= 1 - f && r <= 1 + f) }'
}
# fb_latency DIR: fabricbench's inter-node one-way latency (us, median) of a 2-rank run
fb_latency() {
    csv_awk 'v("case") == "matrix_latency" && v("transport") == "mpi" && v("metric") == "latency" &&
             v("link") == "network" { print v("median") }' "$1/results.csv"
}
lat_run() { # lat_run NAME: 2 ranks, 1 per host, latency only (the bandwidth points are tiny)
    cluster_mpi 1 2 "$bin" run p2p --sizes 8 --matrix-bytes 8 --latency-bytes 8 --trials 21 \
        --quiet --out "$w/$1" >"$w/$1.txt" 2>&1 || { fail "fabricbench p2p exited $?: $(tail -n 3 "$w/$1.txt")"; return 1; }
}

case $mode in
bandwidth)
    rate_mbit=800
    mtu=$(ip netns exec "$CL_NS_A" cat "/sys/class/net/$CL_IF_A/mtu")
    ts=$(ip netns exec "$CL_NS_A" cat /proc/sys/net/ipv4/tcp_timestamps)
    hdr=$((20 + 20 + (ts != 0 ? 12 : 0)))
    expect=$(awk -v r=$rate_mbit -v m="$mtu" -v h=$hdr 'BEGIN { printf "%.6f", r * 1e6 / 8 * (m - h) / (m + 14) / 1e9 }')
    echo "imposed: tbf $rate_mbit Mbit/s, bucket 1 MiB, on both ends; MTU $mtu, TCP timestamps $ts: payload $((mtu - hdr)) of $((mtu + 14)) bytes per frame"
    echo "expected MPI payload rate: $rate_mbit/8 * 1e6 * $((mtu - hdr))/$((mtu + 14)) = $expect GB/s"
    # A bucket of 1 MiB: on a busy machine the qdisc is serviced late and in bursts, and a small
    # bucket then caps the rate below the one asked for (64 KiB read 40% low, 256 KiB 6% low at load
    # 10-17 on 2 cores, 2026-11-30: docs/cluster-tests.md). Between timed messages the bucket
    # refills only for the length of a barrier: under 1 MiB, 1.6% of a 64 MiB message.
    cluster_shape ${rate_mbit}mbit 1mb || { fail "tc tbf could not be set"; finish; }
    # The expected-figure model (docs/expected.md) reads a sysfs tree that describes both veth
    # ends at the shaped rate (sys1) or at four times it (sys4).
    sysfs_tree() {
        for ifc in "$CL_IF_A" "$CL_IF_B"; do
            mkdir -p "$1/class/net/$ifc" && echo "$2" >"$1/class/net/$ifc/speed" &&
                echo "$mtu" >"$1/class/net/$ifc/mtu" && echo up >"$1/class/net/$ifc/operstate" &&
                echo 1 >"$1/class/net/$ifc/type"
        done
    }
    sysfs_tree "$w/sys1" $rate_mbit
    sysfs_tree "$w/sys4" $((4 * rate_mbit))
    for attempt in 1 2 3; do
        out=$w/bw$attempt start=$(date +%s)
        cluster_mpi 1 2 -x FB_SYSFS_ROOT="$w/sys1" "$bin" run p2p --sizes 64M --matrix-bytes 64K --latency-bytes 8 \
            --warmup 2 --trials 5 --quiet --out "$out" >"$out.txt" 2>&1 ||
            { fail "fabricbench p2p exited $?: $(tail -n 12 "$out.txt")"; continue; }
        bw=$(csv_awk 'v("case") == "sweep_uni" && v("transport") == "mpi" && v("metric") == "bandwidth" &&
                      v("src") == 0 && v("dst") == 1 && v("link") == "network" { print v("median") }' "$out/results.csv")
        if ratio=$(within "$bw" "$expect" 0.05); then
            echo "attempt $attempt ($(($(date +%s) - start)) s): p2p 0>1 at 64 MiB $bw GB/s = $ratio x expected"
            fails=0
            break
        fi
        fail "attempt $attempt ($(($(date +%s) - start)) s): p2p 0>1 at 64 MiB read ${bw:-nothing} GB/s, $ratio x the expected $expect GB/s (outside 5%)"
    done
    # The model's figure for that row: the payload of an 800 Mb/s Ethernet port on the wire,
    # rate/8 * (MTU - 52) / (MTU + 38) (the header, FCS, preamble and gap around each frame),
    # 94.15 MB/s at MTU 1500. tbf counts no FCS, preamble or gap, so the link carries 1.6% more
    # than a real port would: the figure reads 90-103% of expected, not 90-100%.
    model=$(awk -v r=$rate_mbit -v m="$mtu" 'BEGIN { printf "%.6f", r * 1e6 / 8 * (m - 52) / (m + 38) / 1e9 }')
    row=$(csv_awk 'v("case") == "sweep_uni" && v("transport") == "mpi" && v("metric") == "bandwidth" &&
                   v("src") == 0 && v("dst") == 1 { print v("median") "|" v("expected") "|" v("bound") }' "$out/results.csv")
    echo "model: $model GB/s; the run's row (median|expected|bound): $row"
    exp=$(echo "$row" | cut -d'|' -f2) bound=$(echo "$row" | cut -d'|' -f3)
    within "$exp" "$model" 0.001 >/dev/null || fail "results.csv's expected is '$exp', the model's figure $model GB/s"
    [ "$bound" = "eth $rate_mbit Mb/s $CL_IF_A" ] || fail "bound is '$bound', expected 'eth $rate_mbit Mb/s $CL_IF_A'"
    share=$(awk -v a="$(echo "$row" | cut -d'|' -f1)" -v b="$exp" 'BEGIN { if (b > 0) printf "%.4f", a / b }')
    awk -v s="$share" 'BEGIN { exit !(s >= 0.90 && s <= 1.03) }' ||
        fail "p2p 0>1 at 64 MiB reads ${share:-no} x its expected figure (0.90-1.03 wanted)"
    echo "p2p 0>1 at 64 MiB: $share x expected"
    # the headline run prints shows the share and the bound
    grep -Eq "^  p2p +sweep_uni +mpi .* 0>1 +64M bandwidth .*GB/s( \(in cache\))?: [0-9]+% of 0.09415 GB/s \(eth 800 Mb/s $CL_IF_A\)$" "$out.txt" ||
        fail "the headline does not show sweep_uni's share of expected: $(grep "^  p2p" "$out.txt" | head -n 3)"
    # report's summary.md judges each series by its own expectation: none short of it here
    "$bin" report --no-plots "$out" >"$w/report1.txt" 2>&1 || fail "report exited $?: $(cat "$w/report1.txt")"
    short=$(sed -n '/^## Short of the hardware$/,/^## /p' "$out/summary.md")
    echo "$short" | grep -Eq '^None: all [0-9]+ series reached 80% of their expected figure or more\.$' ||
        fail "summary.md's 'Short of the hardware' at the shaped rate: $short"
    "$bin" accept "$out" >"$w/accept1.txt" 2>&1
    rc=$?
    [ "$rc" = 0 ] && grep -q '^expected\.p2p\.sweep_uni\.0>1 *PASS' "$w/accept1.txt" ||
        fail "accept without a profile exited $rc on the run described at the shaped rate: $(grep -A1 FAIL "$w/accept1.txt" | head -n 6)"
    # Described at four times the rate: `expect` names the veth as the bound, and a short run is
    # accepted as FAIL naming it (at 4 MiB the link takes 44 ms a message).
    cluster_mpi 1 2 -x FB_SYSFS_ROOT="$w/sys4" "$bin" expect --backend host >"$w/expect4.txt" 2>&1 ||
        fail "expect exited $?: $(tail -n 3 "$w/expect4.txt")"
    # (bounds read "eth 3.2 Gb/s IF" from 1 Gb/s on)
    grep -q "<-> .*bound eth 3.2 Gb/s $CL_IF_A\$" "$w/expect4.txt" ||
        fail "expect does not name the veth at 3.2 Gb/s as the bound: $(cat "$w/expect4.txt")"
    cluster_mpi 1 2 -x FB_SYSFS_ROOT="$w/sys4" "$bin" run p2p --sizes 4M --matrix-bytes 64K --latency-bytes 8 \
        --warmup 1 --trials 3 --quiet --out "$w/bw4" >"$w/bw4.txt" 2>&1 || fail "the run at 4R exited $?: $(tail -n 5 "$w/bw4.txt")"
    "$bin" accept "$w/bw4" >"$w/accept4.txt" 2>&1
    rc=$?
    [ "$rc" = 1 ] || fail "accept of the run described at 4x the rate exited $rc, expected 1"
    grep "^expected\.p2p\.sweep_uni\.0>1 *FAIL" -A1 "$w/accept4.txt" | grep -q "allows.*eth 3.2 Gb/s $CL_IF_A\|eth 3.2 Gb/s $CL_IF_A allows" ||
        fail "accept's FAIL does not name the veth at 3.2 Gb/s: $(grep -A1 'sweep_uni' "$w/accept4.txt" | head -n 4)"
    grep -A1 "^expected\.p2p\.sweep_uni\.0>1" "$w/accept4.txt"
    doc_example docs/expected.md shaped-fail "$w/accept4.txt"
    # ... and summary.md lists that pair under its own expectation, with the bound
    "$bin" report --no-plots "$w/bw4" >"$w/report4.txt" 2>&1 || fail "report exited $?: $(cat "$w/report4.txt")"
    short=$(sed -n '/^## Short of the hardware$/,/^## /p' "$w/bw4/summary.md")
    echo "$short" | grep -E '^\| p2p \| sweep.uni \| mpi \| 2 \| 0.*1 \| 4M \| bandwidth \| ' |
        grep -Eq "\| [0-9]+% \| eth 3\.2 Gb/s $CL_IF_A \|\$" ||
        fail "summary.md does not list p2p 0>1 short of eth 3.2 Gb/s: $short"
    echo "$short" | grep -Eq '^[0-9]+ of [0-9]+ series under 80% of their expected figure\.$' ||
        fail "summary.md's count of series short of the hardware: $short"
    echo "$short" | grep -E '^\| p2p|series under'
    ;;
matrix)
    # 100 Mbit/s with a 64 KiB bucket: a 1 MiB message between the hosts takes 87 ms, 7 times
    # what it takes inside a host even when this machine is busy (vader read 0.086 GB/s at
    # worst at load 10, 2026-11-30: docs/cluster-tests.md).
    cluster_shape 100mbit 64kb || { fail "tc tbf could not be set"; finish; }
    for attempt in 1 2; do
        out=$w/m$attempt fails_before=$fails start=$(date +%s)
        cluster_mpi 2 4 "$bin" run p2p --sizes 64K --matrix-bytes 1M --latency-bytes 8 \
            --warmup 2 --trials 5 --out "$out" >"$out.txt" 2>&1 ||
            { fail "fabricbench p2p exited $?: $(tail -n 12 "$out.txt")"; continue; }
        # every inter-node cell of the one-way matrix below every intra-node cell
        csv_awk 'v("case") == "matrix_uni" && v("transport") == "mpi" && v("metric") == "bandwidth" {
                if (v("link") == "network") { if (inter == "" || v("median") > inter) inter = v("median"); ni++ }
                else { if (intra == "" || v("median") < intra) intra = v("median"); na++ } }
            END { printf "inter-node pairs (%d) at most %s GB/s, intra-node pairs (%d) at least %s GB/s\n", ni, inter, na, intra
                  exit !(ni == 8 && na == 4 && inter + 0 < intra + 0) }' "$out/results.csv" >"$w/matrix.txt" ||
            fail "attempt $attempt: the matrix does not show the inter-node pairs as the slowest: $(cat "$w/matrix.txt")"
        # and the summary names network pairs as the slowest of the one-way matrix over mpi
        awk '/^# p2p matrix_uni over mpi/ { on = 1 } on && /^# slowest pair/ { print } on && /^$/ { exit }' "$out.txt" >"$w/slowest.txt"
        [ -s "$w/slowest.txt" ] && ! grep -qv '(network)' "$w/slowest.txt" ||
            fail "attempt $attempt: the slowest pairs named are not all network pairs: $(cat "$w/slowest.txt")"
        echo "attempt $attempt ($(($(date +%s) - start)) s): $(cat "$w/matrix.txt")"
        cat "$w/slowest.txt"
        if [ "$fails" = "$fails_before" ]; then fails=0; break; fi
    done
    ;;
latency)
    [ -x "$ref" ] || { fail "no reference ping-pong program '$ref'"; finish; }
    broken=0 passed=0 floors_ours= floors_theirs=
    for attempt in 1 2 3 4 5; do
        cluster_mpi 1 2 "$bin" run p2p --sizes 8 --matrix-bytes 8 --latency-bytes 8 --trials 51 \
            --trial-ms 1 --quiet --out "$w/lat$attempt" >"$w/lat$attempt.txt" 2>&1 ||
            { fail "fabricbench p2p exited $?: $(tail -n 12 "$w/lat$attempt.txt")"; broken=$((broken + 1)); continue; }
        set -- $(csv_awk 'v("case") == "matrix_latency" && v("transport") == "mpi" && v("metric") == "latency" &&
                          v("link") == "network" { print v("median"), v("p05") }' "$w/lat$attempt/results.csv")
        ours=${1:-} ours_low=${2:-}
        # 51 trials of 1 ms (about 40 round trips at 12 us one way), as fabricbench's
        set -- $(cluster_mpi 1 2 "$ref" 8 51 40 2>"$w/ref.err")
        theirs=${1:-} theirs_low=${2:-}
        echo "attempt $attempt: one-way latency, median [5th percentile] of 51 trials: fabricbench $ours [$ours_low] us, reference ping-pong $theirs [$theirs_low] us"
        # Each side's floor is the lowest 5th percentile of its attempts so far, up to 5: the two
        # programs run moments apart, and this virtual machine's floor moves between attempts, in
        # two modes near 7 and 11 us (seen on 2026-12-03, the test alone: the reference's 12.4, 8.7
        # and 6.6 us in attempts 1-3, fabricbench's 8.5, 6.9 and 7.9; in another run fabricbench's
        # 8.9, 11.1, 10.7 against the reference's 10.7, 6.8, 10.2), so one attempt's pair can
        # straddle a shift. A constant offset (a round trip reported as one way reads 2x) is in
        # every attempt and never comes within 15%.
        best_ours=$(min_of "${best_ours:-}" "$ours_low") best_theirs=$(min_of "${best_theirs:-}" "$theirs_low")
        floors_ours="$floors_ours ${ours_low:-none}" floors_theirs="$floors_theirs ${theirs_low:-none}"
        if ratio=$(within "$best_ours" "$best_theirs" 0.15); then
            echo "lowest 5th percentiles after $attempt attempt(s): fabricbench $best_ours us, reference $best_theirs us: ratio $ratio (within 15%)"
            fails=$broken passed=1 # a run that failed outright stays a failure
            break
        fi
        fail "attempt $attempt: p2p's inter-node latency (lowest 5th percentile so far) ${best_ours:-none} us against the reference's ${best_theirs:-none} us: ratio $ratio, outside 15%"
    done
    # After 5 attempts, the medians of each side's 5th percentiles, same 15%: one side's single
    # visit to the VM's low mode sets its lowest, and the other may not visit it in 5 attempts (CI,
    # 2026-12-06: the reference's 8.0 us in attempt 1, then 9.6-10.3; fabricbench 10.0-11.3 in all
    # 5: lowest 1.25 apart, medians 10.17 and 9.79 us, 1.04). Both sides' floors move between the
    # modes alike, so a constant offset still reads in the medians' ratio. Only with all 5 attempts
    # measured on both sides.
    if [ "$passed" = 0 ] && [ "$broken" = 0 ] && ! printf '%s' "$floors_ours$floors_theirs" | grep -q none; then
        # shellcheck disable=SC2086 # word lists of numbers
        med_ours=$(median_of $floors_ours) med_theirs=$(median_of $floors_theirs)
        if ratio=$(within "$med_ours" "$med_theirs" 0.15); then
            echo "medians of the 5 attempts' 5th percentiles: fabricbench $med_ours us, reference $med_theirs us: ratio $ratio (within 15%)"
            fails=0
        else
            fail "medians of the 5 attempts' 5th percentiles: fabricbench $med_ours us, reference $med_theirs us: ratio $ratio, outside 15%"
        fi
    fi
    ;;
delay)
    why=$(cluster_netem_why) || { echo "SKIP: no delay can be imposed: $why" >&2; exit 77; }
    delay_ms=2
    for attempt in 1 2 3; do
        fails_before=$fails
        cluster_unshape
        lat_run base$attempt || continue
        base=$(fb_latency "$w/base$attempt")
        cluster_delay $delay_ms || { fail "netem delay could not be set"; break; }
        lat_run delay$attempt || continue
        got=$(fb_latency "$w/delay$attempt")
        want=$(awk -v b="$base" -v d=$delay_ms 'BEGIN { printf "%.3f", d * 1000 + b }')
        ratio=$(within "$got" "$want" 0.05) ||
            fail "attempt $attempt: with netem delay $delay_ms ms each way, latency $got us against $want us (ratio $ratio, outside 5%)"
        echo "attempt $attempt: unshaped $base us; netem $delay_ms ms: $got us, expected $want us, ratio $ratio"
        if [ "$fails" = "$fails_before" ]; then fails=0; break; fi
    done
    ;;
*) echo "usage: fabric.sh bandwidth|matrix|latency|delay FABRICBENCH [REF_PINGPONG]" >&2; exit 2 ;;
esac
finish
