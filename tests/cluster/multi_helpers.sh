#!/bin/sh
# The N-host cluster (multi.sh) does what it says, shown by measurement on 4 hosts, 1 rank each.
# usage: multi_helpers.sh FABRICBENCH
#   hosts    rank R runs on host R under its own host name, over the bridge
#   shaping  every host at 400 Mbit/s, host 3 at 133 Mbit/s, the pair 1-2 at 100 Mbit/s between
#            themselves only: fabricbench's one-way matrix (4 MiB, one pair at a time) reads
#            each ordered pair within 30% of the payload rate of the slowest link on its path
#            (rate/8 x 1448/1514, see docs/cluster-tests.md), so 0-1 and 0-2 run at 400 while
#            1-2 runs at 100, and every pair with host 3 at 133
#   quota    hosts 0 (mpirun's own) and 2 at 5% of one CPU: their ranks sit in their host's cgroup
#            and take at least twice as long as the slower free rank on a CPU-bound loop (a quota is
#            a cap: at load 16 on 2 cores a free rank gets about 15% of a CPU, so 5% read 2.3-2.7
#            times slower here, 2026-12-01: docs/cluster-tests.md), while ranks 1 and 3 stay out
#            of it (host 0's agent children leave its cgroup)
#   clean    after multi_down no namespace, cgroup or veth of this shell is left
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/multi.sh"
bin=$1
multi_up 4
w=$MC_DIR

# --- hosts ---
multi_mpi 1 4 hostname >"$w/names.txt" 2>&1 || fail "a job on 4 hosts failed: $(tail -n 5 "$w/names.txt")"
want=$(for i in 0 1 2 3; do multi_host $i; done | sort | tr '\n' ' ')
got=$(sort "$w/names.txt" | tr '\n' ' ')
[ "$got" = "$want" ] || fail "the 4 ranks' host names are '$got', expected '$want'"

# --- shaping: a link's expected payload rate in GB/s ---
mtu=$(ip netns exec "$(multi_ns 0)" cat "/sys/class/net/$(mc_if_host 0)/mtu")
ts=$(ip netns exec "$(multi_ns 0)" cat /proc/sys/net/ipv4/tcp_timestamps)
hdr=$((20 + 20 + (ts != 0 ? 12 : 0)))
payload() { # payload MBIT -> GB/s
    awk -v r="$1" -v m="$mtu" -v h=$hdr 'BEGIN { printf "%.6f", r * 1e6 / 8 * (m - h) / (m + 14) / 1e9 }'
}
multi_shape_all 400mbit && multi_shape_host 3 133mbit && multi_shape_pair 1 2 100mbit ||
    fail "the shaping could not be set"
echo "imposed: every host 400 Mbit/s, host 3 133 Mbit/s, pair 1-2 100 Mbit/s (tbf/htb, bucket 1 MiB)"
expect_pair() { # expect_pair SRC DST -> Mbit/s of the slowest link on the path
    case "$1$2" in 12 | 21) echo 100 ;; *3*) echo 133 ;; *) echo 400 ;; esac
}
# A section passes on its first clean attempt: the failures of its earlier attempts are dropped,
# never those of an earlier section.
section=$fails
for attempt in 1 2 3; do
    out=$w/shape$attempt fails_before=$fails start=$(date +%s)
    multi_mpi 1 4 "$bin" run p2p --sizes 64K --matrix-bytes 4M --latency-bytes 8 --warmup 1 \
        --trials 3 --quiet --out "$out" >"$out.txt" 2>&1 ||
        { fail "fabricbench p2p on 4 hosts exited $?: $(tail -n 5 "$out.txt")"; continue; }
    csv_awk 'v("case") == "matrix_uni" && v("transport") == "mpi" && v("metric") == "bandwidth" {
            print v("src"), v("dst"), v("median") }' "$out/results.csv" >"$w/pairs.txt"
    [ "$(wc -l <"$w/pairs.txt")" = 12 ] || fail "attempt $attempt: $(wc -l <"$w/pairs.txt") matrix cells, expected 12"
    while read -r src dst bw; do
        mbit=$(expect_pair "$src" "$dst")
        exp=$(payload "$mbit")
        ratio=$(awk -v a="$bw" -v b="$exp" 'BEGIN { printf "%.2f", a / b }')
        echo "  $src>$dst: $bw GB/s, imposed $mbit Mbit/s = $exp GB/s payload: $ratio x"
        awk -v r="$ratio" 'BEGIN { exit !(r >= 0.7 && r <= 1.3) }' ||
            fail "attempt $attempt: pair $src>$dst read $bw GB/s, $ratio x the $exp GB/s of $mbit Mbit/s (outside 30%)"
    done <"$w/pairs.txt"
    echo "attempt $attempt: $(($(date +%s) - start)) s"
    if [ "$fails" = "$fails_before" ]; then fails=$section; break; fi
done
multi_unshape
[ -z "$(ip netns exec "$(multi_ns 3)" tc qdisc show dev "$(mc_if_host 3)" | grep -E 'tbf|htb')" ] ||
    fail "multi_unshape left a qdisc on host 3"

# --- CPU quota: hosts 0 and 2 at 5% of one CPU ---
if multi_throttle_host 0 5 2>"$w/cg.err" && multi_throttle_host 2 5 2>>"$w/cg.err"; then
    section=$fails
    for attempt in 1 2 3; do
        fails_before=$fails
        multi_mpi 1 4 sh -c 'c=$(grep -E "^[0-9]+:(cpu|cpu,cpuacct|cpuacct,cpu|):" /proc/self/cgroup | head -n 1 | cut -d: -f3)
            t0=$(date +%s%N); awk "BEGIN { for (i = 0; i < 3000000; i++) s += i }"; t1=$(date +%s%N)
            echo "$(hostname) $(( (t1 - t0) / 1000000 )) ${c:-/}"' >"$w/loop.txt" 2>&1 ||
            { fail "the CPU loop on 4 hosts failed: $(tail -n 5 "$w/loop.txt")"; continue; }
        for i in 0 1 2 3; do
            set -- $(grep "^$(multi_host $i) " "$w/loop.txt")
            eval "ms$i=\${2:-} cg$i=\${3:-}"
        done
        echo "attempt $attempt: CPU loop ms (cgroup): host 0 $ms0 ($cg0), 1 $ms1 ($cg1), 2 $ms2 ($cg2), 3 $ms3 ($cg3)"
        for i in 0 2; do
            eval "c=\$cg$i"
            [ "${c##*/}" = "$MC_PREFIX.h$i" ] || fail "host $i's rank is in cgroup '$c', not $MC_PREFIX.h$i"
        done
        for i in 1 3; do
            eval "c=\$cg$i"
            case $c in *"$MC_PREFIX".h*) fail "host $i's rank is in a throttled cgroup '$c'" ;; esac
        done
        awk -v a="$ms0" -v b="$ms1" -v c="$ms2" -v d="$ms3" 'BEGIN {
                free = (b > d ? b : d); if (free <= 0) exit 1
                exit !(a >= 2 * free && c >= 2 * free) }' ||
            fail "attempt $attempt: throttled hosts 0 and 2 took $ms0 and $ms2 ms, not 2 x the" \
                 "slower of the free hosts' $ms1 / $ms3 ms"
        if [ "$fails" = "$fails_before" ]; then fails=$section; break; fi
    done
else
    fail "the CPU quota could not be set: $(cat "$w/cg.err")"
fi

# --- clean-up leaves nothing of this shell ---
prefix=$MC_PREFIX
multi_down
left=$(ip netns list | awk '{ print $1 }' | grep "^$prefix")
[ -z "$left" ] || fail "namespaces left after multi_down: $left"
ls -d /sys/fs/cgroup/*/"$prefix".h* /sys/fs/cgroup/"$prefix".h* 2>/dev/null | grep -q . &&
    fail "cgroups left after multi_down: $(ls -d /sys/fs/cgroup/*/"$prefix".h* 2>/dev/null)"
ip -br link | grep -q "^$prefix" && fail "interfaces left after multi_down: $(ip -br link | grep "^$prefix")"
finish
