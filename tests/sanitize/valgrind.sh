#!/bin/sh
# valgrind memcheck on a short run of h2d, allreduce and p2p under mpirun -np 2 (each rank under
# valgrind): no memory error, and no block "definitely lost" that is ours (Open MPI's, PMIx's and
# libpciaccess's own are suppressed, with reasons, in valgrind.supp). Skipped without valgrind.
#   valgrind.sh BIN SUPPRESSIONS
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
bin=$1 supp=$2
command -v valgrind >/dev/null 2>&1 || { echo "valgrind is not installed (apt-get install valgrind)"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --keep-debuginfo: names stay on the frames of libraries dlclose'd before the leak check (Open
# MPI's components, hwloc's plugins), so the suppressions can match them.
mpi 2 valgrind --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --error-exitcode=42 --num-callers=40 --keep-debuginfo=yes --suppressions="$supp" \
    --log-file="$work/vg.%q{OMPI_COMM_WORLD_RANK}.log" \
    "$bin" run h2d allreduce p2p --backend host --sizes 4K --matrix-bytes 4K --latency-bytes 8 \
    --ranks 2 --iters 2 --trials 2 --warmup 1 --quiet --out "$work/run" >"$work/stdout" 2>"$work/stderr"
rc=$?
for r in 0 1; do
    log="$work/vg.$r.log"
    [ -s "$log" ] || { fail "rank $r: no valgrind log"; continue; }
    grep -q "Memcheck, a memory error detector" "$log" || fail "rank $r: not run under memcheck"
    grep -q "ERROR SUMMARY: 0 errors" "$log" || { fail "rank $r: valgrind found errors:"; cat "$log" >&2; }
    lost=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' "$log")
    echo "rank $r: definitely lost, not suppressed: ${lost:-0} bytes; $(grep -o 'suppressed: [0-9,]* bytes in [0-9,]* blocks' "$log" | head -1)"
done
[ "$rc" = 0 ] || { tail -n 20 "$work/stderr" >&2; fail "the run exited $rc (42: valgrind errors)"; }
grep -Eq '"run_status":[[:space:]]*"complete"' "$work/run/env.json" 2>/dev/null || fail "the run is not complete"
finish
