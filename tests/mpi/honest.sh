#!/bin/sh
# The host figures are honest: fabricbench's pinned copy bandwidth, its 2-rank all-reduce of the
# DenseNet-121 gradient size (27,872,824 B), its 2-rank MPI send/recv of 16 MiB and its 2-rank
# `ipc-staged` transfer of 16 MiB match independent measurements of the same thing on the same
# machine (tests/ref: a memcpy loop, a plain MPI_Allreduce loop, a plain MPI_Send/MPI_Recv loop,
# two forked processes copying through one shared buffer with spinning flags) within 25%. The
# staged check is the one that catches a harness cost in the staged path (a sleeping wait, a
# fresh buffer's page faults): the reference has none of it.
# A 2-core shared machine is noisy; each side is the median of several trials, the set is measured
# up to 7 times, and each figure compares each side's best so far (the highest bandwidth, the lowest
# time): the two sides run moments apart, and in one run of the test alone (a clean-clone run,
# 2026-12-03) the second set read the copy 26% under the reference and the staged transfer 34% over
# it, after a first set where both were within 7%. A run's 16 MiB send/recv median moves from one
# launch to the next, on both sides alike (2026-12-05: 2.2 to 4.2 ms in 6 launches of each, alone):
# with 3 sets, fabricbench's three launches once all read 3.2-3.7 ms against the reference's best of
# 2.4 (CI and here, alone). A cost in fabricbench's path is in every set. After 7 sets (5 until CI,
# 2026-12-07, on a slow run: the reference's send/recv read 2.4-4.6 ms in all 5 of its launches,
# fabricbench's 1.8-3.1, best ratio 0.749, medians 0.719), a figure whose best is still out is
# judged on the median of each side's 7 sets: one lucky set moves a best (CI, 2026-12-06:
# fabricbench's copy 10.9-18.5 GB/s over its sets against the loop's 11.2-12.5, best ratio 1.49,
# medians 13.0 and 11.6; its all-reduce 6.8 ms once, otherwise 9.9-11.1, against 9.6-11.3), not a
# cost that is in every set.
. "$(dirname "$0")/../lib.sh"
bin=$1 ref_memcpy=$2 ref_allreduce=$3 ref_sendrecv=$4 ref_staged=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ratio_ok() { awk -v a="$1" -v b="$2" 'BEGIN { r = a / b; printf "%.3f", r; exit !(r > 0.75 && r < 1.333) }'; }
# best KIND OLD NEW: the better of two figures (KIND max for a bandwidth, min for a time); an
# empty one is ignored
best() { awk -v k="$1" -v a="$2" -v b="$3" 'BEGIN { if (a == "") print b; else if (b == "") print a
    else if (k == "max") print (a + 0 > b + 0 ? a : b); else print (a + 0 < b + 0 ? a : b) }'; }

# median LIST: the median of a list of figures
median() { echo "$1" | tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 }
    END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

copy_bytes=67108864 ar_bytes=27872824 p2p_bytes=16777216
b_copy= b_rcopy= b_ar= b_rar= b_p2p= b_rp2p= b_stg= b_rstg=
l_copy= l_rcopy= l_ar= l_rar= l_p2p= l_rp2p= l_stg= l_rstg=
for attempt in 1 2 3 4 5 6 7; do
    rm -rf "$work/h2d" "$work/ar" "$work/p2p"
    mpi 1 "$bin" run h2d --backend host --out "$work/h2d" --sizes 64M --trials 9 --quiet >/dev/null 2>&1 ||
        fail "fabricbench h2d failed"
    ours_copy=$(csv_awk 'v("case") == "pinned_h2d" && v("metric") == "bandwidth" { print v("median") }' \
        "$work/h2d/results.csv")
    # launched as fabricbench's rank is (mpirun binds one process to core 0): on a VM whose two
    # CPUs see the cache differently, an unbound loop and a bound rank measured different CPUs
    # (CI, 2026-12-06: fabricbench 17.4-22.1 GB/s in all 5 sets against the loop's 12.4-13.4)
    ref_copy=$(mpi 1 "$ref_memcpy" "$copy_bytes" 9)
    mpi 2 "$bin" run allreduce --backend host --out "$work/ar" --sizes "$ar_bytes" --ranks 2 \
        --trials 9 --quiet >/dev/null 2>&1 || fail "fabricbench allreduce failed"
    ours_ar=$(csv_awk 'v("case") == "out_of_place" && v("metric") == "time" { print v("median") }' \
        "$work/ar/results.csv")
    ref_ar=$(mpi 2 "$ref_allreduce" "$ar_bytes" 9)
    mpi 2 "$bin" run p2p --backend host --out "$work/p2p" --sizes "$p2p_bytes" --matrix-bytes 4K \
        --trials 9 --quiet >/dev/null 2>&1 || fail "fabricbench p2p failed"
    ours_p2p=$(csv_awk 'v("case") == "sweep_uni" && v("transport") == "mpi" && v("metric") == "time" { print v("median") }' \
        "$work/p2p/results.csv")
    ref_p2p=$(mpi 2 "$ref_sendrecv" "$p2p_bytes" 9)
    ours_staged=$(csv_awk 'v("case") == "sweep_uni" && v("transport") == "ipc-staged" && v("metric") == "time" { print v("median") }' \
        "$work/p2p/results.csv")
    ref_stg=$("$ref_staged" "$p2p_bytes" 25)
    l_copy="$l_copy $ours_copy" l_rcopy="$l_rcopy $ref_copy" l_ar="$l_ar $ours_ar" l_rar="$l_rar $ref_ar"
    l_p2p="$l_p2p $ours_p2p" l_rp2p="$l_rp2p $ref_p2p" l_stg="$l_stg $ours_staged" l_rstg="$l_rstg $ref_stg"
    b_copy=$(best max "$b_copy" "$ours_copy") b_rcopy=$(best max "$b_rcopy" "$ref_copy")
    b_ar=$(best min "$b_ar" "$ours_ar") b_rar=$(best min "$b_rar" "$ref_ar")
    b_p2p=$(best min "$b_p2p" "$ours_p2p") b_rp2p=$(best min "$b_rp2p" "$ref_p2p")
    b_stg=$(best min "$b_stg" "$ours_staged") b_rstg=$(best min "$b_rstg" "$ref_stg")
    r1=$(ratio_ok "$b_copy" "$b_rcopy"); ok1=$?
    r2=$(ratio_ok "$b_ar" "$b_rar"); ok2=$?
    r3=$(ratio_ok "$b_p2p" "$b_rp2p"); ok3=$?
    r4=$(ratio_ok "$b_stg" "$b_rstg"); ok4=$?
    echo "set $attempt (this set's figures; the ratio of each side's best so far):"
    echo "pinned h2d 64M: fabricbench $ours_copy GB/s, memcpy loop $ref_copy GB/s, best ratio $r1"
    echo "allreduce 27872824 B on 2 ranks: fabricbench $ours_ar us, MPI_Allreduce loop $ref_ar us, best ratio $r2"
    echo "p2p 16M 0>1 over MPI: fabricbench $ours_p2p us, MPI_Send/Recv loop $ref_p2p us, best ratio $r3"
    echo "p2p 16M 0>1 staged: fabricbench ipc-staged $ours_staged us, two processes through a shared buffer $ref_stg us, best ratio $r4"
    [ $ok1 = 0 ] && [ $ok2 = 0 ] && [ $ok3 = 0 ] && [ $ok4 = 0 ] && finish
done
# judge BEST_OK OURS REFS WHAT: a figure whose best ratio is out, judged on the 7 sets' medians
judge() {
    [ "$1" = 0 ] && return
    m=$(ratio_ok "$(median "$2")" "$(median "$3")") && {
        echo "$4: best ratio out, ratio of the 7 sets' medians $m: within 25%"
        return
    }
    fail "$4 differs from the reference by more than 25% (ratio of the 7 sets' medians $m)"
}
judge $ok1 "$l_copy" "$l_rcopy" "copy bandwidth"
judge $ok2 "$l_ar" "$l_rar" "all-reduce time"
judge $ok3 "$l_p2p" "$l_rp2p" "send/recv time"
judge $ok4 "$l_stg" "$l_rstg" "ipc-staged time"
finish
