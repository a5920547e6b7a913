#!/bin/sh
# fabricbench's collectives beside OSU's on the host backend (issue 18): osu_allgather,
# osu_reduce_scatter, osu_alltoall and osu_bcast against all_gather, reduce_scatter, alltoall
# and broadcast, at the same sizes, rank count and binding, timed the same way, mean against
# mean. Builds nothing:
#   sh docs/benchmarks/osu-compare.sh OSU_COLLECTIVE_DIR [FABRICBENCH] [NP] [SIZES] [REPS]
# OSU_COLLECTIVE_DIR holds osu_allgather ... (OSU's libexec/osu-micro-benchmarks/mpi/collective).
# SIZES are fabricbench's (nccl-tests') sizes in bytes, comma-separated (default
# 16384,262144,4194304); OSU's size is the per-rank block for allgather and alltoall (size / NP)
# and the same size for reduce_scatter and bcast. Both run float32 (OSU -T mpi_float), with
# OSU's buffers (out of place; broadcast in place: MPI_Bcast has one buffer, and fabricbench's
# out of place broadcast copies the root's send buffer into it inside the time), under
# `$MPIRUN -np NP $BIND` (MPIRUN=mpirun, BIND="--bind-to core" unless set), and time the same
# number of iterations, fixed rather than calibrated (a hiccup during calibration cannot shorten
# the trials): per size, 2684354560 / size iterations within 500 to 10000 (10000 up to 256 KiB,
# 640 at 4 MiB: enough collectives a run that one scheduler hiccup weighs little in a mean),
# OSU's `-i N -x 20` and fabricbench's `--trials 10 --iters N/10 --warmup 20`. OSU_ITERS
# (OSU's count) and FB_OPTS (fabricbench's options) replace them for every size. fabricbench
# runs with `--timing both`: its collectives are timed OSU's way (a barrier before each
# iteration, outside the time, and MPI's call between two clock reads; time_synced_avg and
# time_synced_max) and, for the record, in its default batches (time). Each size runs on its
# own: one OSU run and one fabricbench run back to back, the first of the two alternating from
# one repetition to the next, REPS times (default 3); each figure is the median over the
# repetitions.
# Columns: bench, size, OSU's size; the means compared: OSU's "Avg Latency" and fabricbench's
# `mean` of time_synced_avg (both the mean over ranks of each rank's mean iteration), the ratio
# of their medians (fabricbench / OSU), and `paired`, the median over the repetitions of each
# pair's ratio (the two runs of a pair seconds apart, so a drift of the machine's speed over a
# minute cancels in it); OSU's "Max Latency" (-f) and fabricbench's time_synced_max (the
# largest over ranks of each rank's mean) and their ratio; fabricbench's batch figure, the
# `mean` of `time` (the slowest rank's time per iteration, iterations back to back) and its
# ratio to OSU's average; then the typical iteration: OSU's P50 (-z) and fabricbench's median
# of `time_iter` (iterations timed one by one in batch), and their ratio; last, paired_lo and
# paired_hi, a confidence interval of the paired median (at least 95%, from the pairs' ratios;
# nan under 6 repetitions). AA=osu runs OSU in both slots and AA=fabricbench fabricbench in
# both (an A/A run: how far the ratios move by chance on this machine; the "fb" columns are
# then the second OSU run's, its avg in the batch column, or the "osu" columns the first
# fabricbench run's). Exit 2 on bad arguments, 1 when a run fails.
set -u
die() { echo "error: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: sh $0 OSU_COLLECTIVE_DIR [FABRICBENCH] [NP] [SIZES] [REPS]"
osu=$1
fb=${2:-fabricbench}
np=${3:-2}
sizes=${4:-16384,262144,4194304}
reps=${5:-3}
mpirun=${MPIRUN:-mpirun}
bind=${BIND:---bind-to core}
# iterations at size $1: OSU_ITERS, or 2684354560 / size within 500..10000, a multiple of 10
iters_at() {
    if [ -n "${OSU_ITERS:-}" ]; then echo "$OSU_ITERS"; return; fi
    n=$((2684354560 / $1 / 10 * 10))
    [ "$n" -lt 500 ] && n=500
    [ "$n" -gt 10000 ] && n=10000
    echo "$n"
}
# fabricbench's options at size $1: FB_OPTS, or the same count of iterations in 10 trials
fb_opts_at() {
    if [ -n "${FB_OPTS:-}" ]; then echo "$FB_OPTS"; return; fi
    echo "--trials 10 --iters $(($(iters_at "$1") / 10)) --warmup 20"
}
for t in osu_allgather osu_reduce_scatter osu_alltoall osu_bcast; do
    [ -x "$osu/$t" ] || die "$osu/$t: not an executable (give OSU's collective folder)"
done
command -v "$fb" >/dev/null 2>&1 || die "$fb: fabricbench not found"
case "$np" in '' | *[!0-9]* | 0*) die "NP '$np' is not a rank count (digits, no leading 0)" ;; esac
case "$reps" in '' | *[!0-9]* | 0) die "REPS '$reps' is not a positive count" ;; esac
[ "${#reps}" -le 4 ] && [ "$reps" -le 1000 ] || die "REPS '$reps' is above 1000"
aa=${AA:-}
case "$aa" in '' | osu | fabricbench) ;; *) die "AA '$aa' is neither osu nor fabricbench" ;; esac
case "$sizes" in '' | *[!0-9,]* | ,* | *, | *,,* | 0 | 0,* | *,0 | *,0,* | 0[0-9]* | *,0[0-9]*)
    die "SIZES '$sizes' is not a list of byte counts above 0" ;;
esac
# (a folder of its own, or nothing: an empty $work would write and remove under /)
work=$(mktemp -d) && [ -n "$work" ] && [ -d "$work" ] || die "cannot make a temporary folder"
trap 'rm -rf "$work"' EXIT

# median of the numbers on stdin
median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2)
        print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# ci: "lo hi", a distribution-free confidence interval of the median of the numbers on stdin:
# the order statistics x(k) and x(n+1-k), k the largest with P(Binomial(n, 1/2) < k) <= 0.025,
# so that it holds the median with at least 95% confidence (31 numbers: x(10) and x(22), 97%);
# "nan nan" under 6 numbers, too few for any
ci() {
    sort -g | awk '{ v[NR] = $1 } END { n = NR; k = 0; c = 0; p = 0.5 ^ n
        for (i = 0; i < n; i++) {
            c += p; if (c > 0.025) break
            k = i + 1; p = p * (n - i) / (i + 1) }
        if (k < 1) print "nan nan"; else print v[k], v[n + 1 - k] }'
}

# med N: the median over the repetitions of column N of size $s's lines in $work/all
med() { awk -v s="$s" -v n="$1" '$1 == s { print $n }' "$work/all" | median; }

# last_lines FILE: the last 3 lines of a failed program's output, on one line, without mpirun's
# own notices (the blocks between lines of dashes), which can come after the program's lines
# or before them, as the job's ending goes
last_lines() {
    awk '/^-----+$/ { box = !box; next } !box' "$1" | tail -n 3 | tr '\n' ' '
}

# osu_run TOOL OSU_SIZE SIZE: "avg max p50" in us at that size (-f: Avg, Min, Max, Iterations,
# then -z's P50, P90, P99); SIZE (fabricbench's) sets the iterations
osu_run() {
    # shellcheck disable=SC2086 # BIND is a word list
    $mpirun -np "$np" $bind "$osu/$1" -m "$2:$2" -T mpi_float -i "$(iters_at "$3")" -x 20 -f -z \
        >"$work/osu.out" 2>&1 ||
        { echo "error: $1 failed: $(last_lines "$work/osu.out")" >&2; return 1; }
    awk -v s="$2" '$1 == s { print $2, $4, $6; n++ } END { exit n != 1 }' "$work/osu.out" ||
        { echo "error: $1 printed no figure for $2 bytes: $(tail -n 3 "$work/osu.out" | tr '\n' ' ')" >&2
          return 1; }
}

# fb_run BENCH CASE SIZE: "synced_avg synced_max batch_mean median_of_time_iter" at that size
fb_run() {
    rm -rf "$work/fb"
    # shellcheck disable=SC2086,SC2046 # BIND and the options are word lists
    $mpirun -np "$np" $bind "$fb" run "$1" --backend host --sizes "$3" --ranks "$np" \
        --dtype float32 --timing both $(fb_opts_at "$3") --quiet --out "$work/fb" \
        >"$work/fb.out" 2>&1 ||
        { echo "error: fabricbench $1 failed: $(last_lines "$work/fb.out")" >&2
          return 1; }
    awk -F, -v b="$1" -v k="$2" -v np="$np" -v s="$3" '
        NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["bench"] == b && $c["case"] == k && $c["ranks"] == np && $c["bytes"] == s {
            m = $c["metric"]
            if (m == "time_synced_avg") avg = $c["mean"]
            if (m == "time_synced_max") max = $c["mean"]
            if (m == "time") mean = $c["mean"]
            if (m == "time_iter") p50 = $c["median"] }
        END { if (avg == "" || max == "" || mean == "" || p50 == "") exit 1
              print avg, max, mean, p50 }' "$work/fb/results.csv" ||
        { echo "error: fabricbench $1 wrote no $2 figures for $3 bytes" >&2; return 1; }
}

# run_as KIND: "avg max batch p50" at $bench/$tool, $kase, OSU's size $o and size $s from a run
# of KIND (osu or fabricbench; OSU has no batch figure: its avg stands in that column)
run_as() {
    if [ "$1" = osu ]; then
        l=$(osu_run "$tool" "$o" "$s") || return 1
        echo "$l" | awk '{ print $1, $2, $1, $3 }'
    else
        fb_run "$bench" "$kase" "$s"
    fi
}
# the two slots of a pair: OSU's and fabricbench's, or one of them twice (A/A)
first=osu second=fabricbench
[ "$aa" = osu ] && second=osu
[ "$aa" = fabricbench ] && first=fabricbench

printf '%-14s %8s %8s %8s %8s %6s %6s %8s %8s %6s %8s %6s %8s %8s %6s %9s %9s\n' bench size \
    osu_size osu_avg fb_avg ratio paired osu_max fb_max ratio fb_batch ratio osu_p50 fb_p50 \
    ratio paired_lo paired_hi
# bench:OSU tool:OSU's size (a block or the total):fabricbench's case like OSU's buffers
for pair in all_gather:osu_allgather:block:out_of_place \
            reduce_scatter:osu_reduce_scatter:total:out_of_place \
            alltoall:osu_alltoall:block:out_of_place broadcast:osu_bcast:total:in_place; do
    bench=${pair%%:*}; rest=${pair#*:}; tool=${rest%%:*}; rest=${rest#*:}
    kind=${rest%%:*}; kase=${rest#*:}
    # one line per repetition and size: "size osu_avg osu_max osu_batch osu_p50 fb_avg fb_max
    # fb_batch fb_p50", the two runs of a line back to back, the first of them alternating
    : >"$work/all"
    r=0
    while [ "$r" -lt "$reps" ]; do
        for s in $(echo "$sizes" | tr ',' ' '); do
            o=$s; [ "$kind" = block ] && o=$((s / np))
            if [ $((r % 2)) = 0 ]; then
                ol=$(run_as $first) || exit 1
                fl=$(run_as $second) || exit 1
            else
                fl=$(run_as $second) || exit 1
                ol=$(run_as $first) || exit 1
            fi
            echo "$s $ol $fl" >>"$work/all"
        done
        r=$((r + 1))
    done
    for s in $(echo "$sizes" | tr ',' ' '); do
        o=$s; [ "$kind" = block ] && o=$((s / np))
        awk -v s="$s" '$1 == s && $2 > 0 { print $6 / $2 }' "$work/all" >"$work/pairs"
        paired=$(median <"$work/pairs")
        bounds=$(ci <"$work/pairs")
        awk -v b="$bench" -v s="$s" -v o="$o" -v oa="$(med 2)" -v om="$(med 3)" \
            -v op="$(med 5)" -v fa="$(med 6)" -v fm="$(med 7)" -v fb="$(med 8)" \
            -v fp="$(med 9)" -v pr="$paired" -v ci="$bounds" '
            function r(x, y) { return y > 0 ? x / y : 0 }
            function f(x) { return x == "nan" ? x : sprintf("%.3f", x) }
            BEGIN { split(ci, c, " ")
                    printf "%-14s %8d %8d %8.2f %8.2f %6.3f %6.3f %8.2f %8.2f %6.3f %8.2f " \
                           "%6.3f %8.2f %8.2f %6.3f %9s %9s\n", b, s, o, oa, fa, r(fa, oa), pr,
                           om, fm, r(fm, om), fb, r(fb, oa), op, fp, r(fp, op), f(c[1]), f(c[2]) }'
    done
done
