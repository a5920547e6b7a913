#!/bin/sh
# docs/benchmarks/osu-compare.sh's logic with stand-ins for OSU's binaries (shell scripts printing
# OSU 7.4's table with -f -z, with fixed figures, recording their arguments) and the real
# fabricbench at 2 ranks, 2 repetitions (so both orders of a pair run): OSU's size is size / ranks
# for allgather and alltoall and the size for reduce_scatter and bcast, float32, the iteration
# count, -f and -z reach OSU, fabricbench's figures are its synced ones (time_synced_avg <=
# time_synced_max) beside its batch one, the ratios are fabricbench / OSU (the paired one the
# median of each pair's), and bad arguments give one error line and exit 2.
. "$(dirname "$0")/lib.sh"
script=$1
bin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
osu="$work/osu"
mkdir "$osu"
# OSU's output with -f -z (as osu_allgather 7.4 prints it): rank 0 prints the size given by
# -m S:S, Avg 10 us, Min 6 us, Max 20 us, the iterations, and P50 8 us.
for t in osu_allgather osu_reduce_scatter osu_alltoall osu_bcast; do
    cat >"$osu/$t" <<EOS
#!/bin/sh
[ "\${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
echo "$t \$*" >>"$work/args"
size=\$(echo "\$*" | sed 's/.*-m \([0-9]*\):.*/\1/')
printf '%-10s%18s%18s%18s%12s%18s%18s%18s\\n' "# Size" "Avg Latency(us)" \\
    "Min Latency(us)" "Max Latency(us)" Iterations "P50 Tail Lat(us)" "P90 Tail Lat(us)" \\
    "P99 Tail Lat(us)"
printf '%-10s%18.2f%18.2f%18.2f%12d%18.2f%18.2f%18.2f\\n' "\$size" 10 6 20 7 8 9 9.5
EOS
    chmod +x "$osu/$t"
done

MPIRUN="${MPIEXEC:-mpirun} --oversubscribe" BIND="--bind-to none" OSU_ITERS=7 \
    FB_OPTS="--trials 2 --iters 4 --warmup 1" \
    sh "$script" "$osu" "$bin" 2 4096 2 >"$work/table" 2>"$work/err"
rc=$?
[ "$rc" = 0 ] || fail "osu-compare.sh exited $rc: $(tail -n 3 "$work/err")"
awk 'NR == 1 { if ($1 != "bench" || $4 != "osu_avg" || $5 != "fb_avg" || $7 != "paired" ||
                 $8 != "osu_max" || $9 != "fb_max" || $11 != "fb_batch" || $13 != "osu_p50" ||
                 $16 != "paired_lo" || $17 != "paired_hi")
                   print "header: " $0
               next }
     function near(r, x, what) {
         if (r - x > 0.002 || x - r > 0.002) print $1 ": " what " " r " is not " x }
     { want = ($1 == "all_gather" || $1 == "alltoall") ? 2048 : 4096
       if ($2 != 4096 || $3 != want) print $1 ": sizes " $2 " " $3 ", expected 4096 " want
       if ($4 != 10 || $8 != 20 || $13 != 8)
           print $1 ": OSU figures " $4 " " $8 " " $13 ", expected 10, 20 and 8"
       if (!($5 > 0) || !($9 > 0) || !($11 > 0) || !($14 > 0))
           print $1 ": fabricbench figures " $5 " " $9 " " $11 " " $14
       if ($5 > $9) print $1 ": fabricbench synced avg " $5 " above its max " $9
       if ($16 != "nan" || $17 != "nan")
           print $1 ": an interval " $16 " " $17 " from 2 repetitions, expected nan nan"
       # OSU says 10 every time: the ratio of each pair is the fabricbench figure / 10, and
       # the median of two ratios that of the median of two figures (no quote mark in here:
       # this program is a single-quoted shell word)
       near($6, $5 / 10, "avg ratio"); near($7, $5 / 10, "paired ratio")
       near($10, $9 / 20, "max ratio"); near($12, $11 / 10, "batch ratio")
       near($15, $14 / 8, "p50 ratio")
       n++ }
     END { if (n != 4) print n + 0 " rows, expected 4" }' "$work/table" >"$work/bad"
[ ! -s "$work/bad" ] || fail "table: $(cat "$work/bad") in: $(cat "$work/table")"
for t in osu_allgather osu_reduce_scatter osu_alltoall osu_bcast; do
    grep -q "^$t .*-T mpi_float -i 7 -x 20 -f -z" "$work/args" ||
        fail "$t was not given float32, 7 iterations, -f and -z: $(grep "^$t " "$work/args")"
done

# AA=osu, OSU in both slots: a stand-in whose Avg is its call's number (1, 2, ...) gives known
# pairs. Repetition r's calls are 2r+1 and 2r+2, the first slot's first in even repetitions, so
# the first slot reads 1, 4, 5, 8, 9, 12, 13 (median 8), the second 2, 3, 6, 7, 10, 11, 14
# (median 7, its Avg in the batch column too), the pairs' ratios 2/1, 3/4, 6/5, 7/8, 10/9, 11/12,
# 14/13 (median 14/13 = 1.077) and, at 7 ratios, the interval of the median is their extremes.
count="$work/osu-count"
mkdir "$count"
for t in osu_allgather osu_reduce_scatter osu_alltoall osu_bcast; do
    cat >"$count/$t" <<EOS
#!/bin/sh
[ "\${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
n=\$((\$(cat "$work/n.$t" 2>/dev/null || echo 0) + 1))
echo \$n >"$work/n.$t"
size=\$(echo "\$*" | sed 's/.*-m \([0-9]*\):.*/\1/')
echo "# Size Avg Min Max Iterations P50 P90 P99"
echo "\$size \$n 1 \$n 7 \$n \$n \$n"
EOS
    chmod +x "$count/$t"
done
# Only stand-ins run here (56 calls), so the launcher is one too: rank 0 alone, as mpirun's
# rank 0 would print (the others print nothing); what is checked is the pairing, not MPI.
printf '#!/bin/sh\n[ "$1" = -np ] && shift 2\nexec "$@"\n' >"$work/mpirun1"
AA=osu MPIRUN="sh $work/mpirun1" BIND=" " OSU_ITERS=7 \
    sh "$script" "$count" "$bin" 2 4096 7 >"$work/table" 2>"$work/err" ||
    fail "AA=osu: $(tail -n 3 "$work/err")"
awk 'NR == 1 { next }
     { if ($4 != 8 || $5 != 7 || $11 != 7 || $7 != 1.077 || $16 != "0.750" || $17 != "2.000")
           print $1 ": avg " $4 " and " $5 ", batch " $11 ", paired " $7 " in " $16 "-" $17 \
                 ", expected 8 and 7, 7, 1.077 in 0.750-2.000"
       n++ }
     END { if (n != 4) print n + 0 " rows, expected 4" }' "$work/table" >"$work/bad"
[ ! -s "$work/bad" ] || fail "AA=osu: $(cat "$work/bad") in: $(cat "$work/table")"

# AA=fabricbench, fabricbench in both slots: OSU is never run, both sides hold its figures
: >"$work/args"
AA=fabricbench MPIRUN="${MPIEXEC:-mpirun} --oversubscribe" BIND="--bind-to none" \
    FB_OPTS="--trials 2 --iters 4 --warmup 1" \
    sh "$script" "$osu" "$bin" 2 4096 1 >"$work/table" 2>"$work/err" ||
    fail "AA=fabricbench: $(tail -n 3 "$work/err")"
[ ! -s "$work/args" ] || fail "AA=fabricbench ran OSU: $(cat "$work/args")"
awk 'NR > 1 && ($4 == 10 || !($4 > 0) || !($5 > 0) || !($13 > 0)) { print }
     END { if (NR != 5) print NR - 1 " rows, expected 4" }' "$work/table" >"$work/bad"
[ ! -s "$work/bad" ] || fail "AA=fabricbench: $(cat "$work/bad")"

# without OSU_ITERS and FB_OPTS both time 2684354560 / size iterations within 500..10000:
# 10000 at 4 KiB, 640 at 4 MiB (OSU -i N; fabricbench 10 trials of N / 10)
# The stand-in records the arguments it was given, then runs fabricbench with 2 trials of 2
# iterations in their place: what is checked is what the script asks for, and 10 x 1000
# iterations at 4 KiB and 10 x 64 at 4 MiB of every collective, actually run, cost CPU that
# checks nothing more.
cat >"$work/fb" <<EOS
#!/bin/sh
[ "\${OMPI_COMM_WORLD_RANK:-0}" = 0 ] && echo "\$*" >>"$work/fbargs"
n=\$# next=
for a in "\$@"; do
    case \$next in trials | iters) a=2 ;; warmup) a=1 ;; esac
    next=
    case \$a in --trials) next=trials ;; --iters) next=iters ;; --warmup) next=warmup ;; esac
    set -- "\$@" "\$a"
done
shift "\$n"
exec "$bin" "\$@"
EOS
chmod +x "$work/fb"
: >"$work/args"
MPIRUN="${MPIEXEC:-mpirun} --oversubscribe" BIND="--bind-to none" \
    sh "$script" "$osu" "$work/fb" 2 4096,4194304 1 >"$work/table" 2>"$work/err" ||
    fail "osu-compare.sh with the default iterations: $(tail -n 3 "$work/err")"
for t in osu_allgather:2048:2097152 osu_reduce_scatter:4096:4194304 osu_alltoall:2048:2097152 \
         osu_bcast:4096:4194304; do
    tool=${t%%:*}; small=${t#*:}; small=${small%%:*}; big=${t##*:}
    grep -q "^$tool -m $small:$small .*-i 10000 -x 20" "$work/args" ||
        fail "$tool at $small bytes was not given 10000 iterations: $(grep "^$tool " "$work/args")"
    grep -q "^$tool -m $big:$big .*-i 640 -x 20" "$work/args" ||
        fail "$tool at $big bytes was not given 640 iterations: $(grep "^$tool " "$work/args")"
done
for b in all_gather reduce_scatter alltoall broadcast; do
    grep -q "^run $b .*--sizes 4096 .*--trials 10 --iters 1000 --warmup 20 " "$work/fbargs" ||
        fail "fabricbench $b at 4 KiB was not given 10 x 1000 iterations: $(cat "$work/fbargs")"
    grep -q "^run $b .*--sizes 4194304 .*--trials 10 --iters 64 --warmup 20 " "$work/fbargs" ||
        fail "fabricbench $b at 4 MiB was not given 10 x 64 iterations: $(cat "$work/fbargs")"
done

# a failing OSU run ends the script (exit 1, one line naming it), as does one without a figure
bad="$work/osu-bad"
mkdir "$bad"
cp "$osu"/* "$bad/"
# broken WHAT EXPECT SCRIPT: osu_allgather replaced by SCRIPT; the script exits 1 with one line
# matching EXPECT on stderr and no table
broken() {
    printf '%s' "$3" >"$bad/osu_allgather"
    chmod +x "$bad/osu_allgather"
    MPIRUN="${MPIEXEC:-mpirun} --oversubscribe" BIND="--bind-to none" OSU_ITERS=7 \
        FB_OPTS="--trials 2 --iters 4 --warmup 1" sh "$script" "$bad" "$bin" 2 4096 1 \
        >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" = 1 ] || fail "with $1 the script exited $rc, expected 1"
    grep -q "^$2" "$work/err" || fail "with $1, no error '$2': $(cat "$work/err")"
    [ "$(wc -l <"$work/err")" = 1 ] || fail "with $1, more than one line: $(cat "$work/err")"
    [ "$(wc -l <"$work/out")" -le 1 ] || fail "with $1, a table was printed: $(cat "$work/out")"
}
broken "a failing osu_allgather" "error: osu_allgather failed: .*MPI_Init failed" \
    '#!/bin/sh
echo "MPI_Init failed" >&2
echo "  (a second line)" >&2
exit 3
'
broken "an osu_allgather printing no figure" \
    "error: osu_allgather printed no figure for 2048 bytes" '#!/bin/sh
echo "# nothing"
'

cd "$work" || exit 1
expect_error "not an executable" sh "$script" "$work/none" "$bin"
expect_error "REPS 'x' is not a positive count" sh "$script" "$osu" "$bin" 2 4096 x
expect_error "is not a list of byte counts" sh "$script" "$osu" "$bin" 2 4K
# sizes that would divide by zero or print nothing, and a rank count read as octal by $(( ))
for bad in , 0 4096,0 4096,,8192 010; do
    expect_error "SIZES '$bad' is not a list of byte counts above 0" sh "$script" "$osu" "$bin" 2 "$bad"
done
expect_error "NP '010' is not a rank count" sh "$script" "$osu" "$bin" 010
expect_error "REPS '1001' is above 1000" sh "$script" "$osu" "$bin" 2 4096 1001
expect_error "AA 'fb' is neither osu nor fabricbench" env AA=fb sh "$script" "$osu" "$bin"
finish
