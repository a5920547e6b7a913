#!/bin/sh
# docs/benchmarks/osu-compare.sh's logic with stand-ins for OSU's binaries (shell scripts printing
# OSU's table with fixed figures, recording their arguments) and the real fabricbench at 2 ranks:
# OSU's size is size / ranks for allgather and alltoall and the size for reduce_scatter and bcast,
# float32 and the iteration count reach OSU, the ratios are fabricbench / OSU, and bad arguments
# give one error line and exit 2.
. "$(dirname "$0")/lib.sh"
script=$1
bin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
osu="$work/osu"
mkdir "$osu"
# OSU's output: rank 0 prints the size given by -m S:S, "mean" 10 us and P50 8 us.
for t in osu_allgather osu_reduce_scatter osu_alltoall osu_bcast; do
    cat >"$osu/$t" <<EOS
#!/bin/sh
[ "\${OMPI_COMM_WORLD_RANK:-0}" = 0 ] || exit 0
echo "$t \$*" >>"$work/args"
size=\$(echo "\$*" | sed 's/.*-m \([0-9]*\):.*/\1/')
echo "# Size       Avg Latency(us)  P50 Tail Lat(us)  P90 Tail Lat(us)  P99 Tail Lat(us)"
echo "\$size                  10.00              8.00              9.00             9.50"
EOS
    chmod +x "$osu/$t"
done

MPIRUN="${MPIEXEC:-mpirun} --oversubscribe" BIND="--bind-to none" OSU_ITERS=7 \
    FB_OPTS="--trials 2 --iters 4 --warmup 1" \
    sh "$script" "$osu" "$bin" 2 4096 1 >"$work/table" 2>"$work/err"
rc=$?
[ "$rc" = 0 ] || fail "osu-compare.sh exited $rc: $(tail -n 3 "$work/err")"
awk 'NR == 1 { if ($1 != "bench" || $4 != "osu_mean" || $5 != "fb_mean") print "header: " $0; next }
     { want = ($1 == "all_gather" || $1 == "alltoall") ? 2048 : 4096
       if ($2 != 4096 || $3 != want) print $1 ": sizes " $2 " " $3 ", expected 4096 " want
       if ($4 != 10 || $7 != 8) print $1 ": OSU figures " $4 " " $7 ", expected 10 and 8"
       if (!($5 > 0) || !($8 > 0)) print $1 ": fabricbench figures " $5 " " $8
       if ($6 - $5 / 10 > 0.002 || $5 / 10 - $6 > 0.002) print $1 ": ratio " $6 " is not " $5 / 10
       if ($9 - $8 / 8 > 0.002 || $8 / 8 - $9 > 0.002) print $1 ": ratio " $9 " is not " $8 / 8
       n++ }
     END { if (n != 4) print n + 0 " rows, expected 4" }' "$work/table" >"$work/bad"
[ ! -s "$work/bad" ] || fail "table: $(cat "$work/bad") in: $(cat "$work/table")"
for t in osu_allgather osu_reduce_scatter osu_alltoall osu_bcast; do
    grep -q "^$t .*-T mpi_float -i 7 " "$work/args" || fail "$t was not given float32 and 7 iterations"
done

cd "$work" || exit 1
expect_error "not an executable" sh "$script" "$work/none" "$bin"
expect_error "REPS 'x' is not a positive count" sh "$script" "$osu" "$bin" 2 4096 x
expect_error "is not a list of byte counts" sh "$script" "$osu" "$bin" 2 4K
finish
