#!/bin/sh
# The host suite under mpirun -np N: checks the content of results.csv and env.json, not just
# the exit code - columns, every planned point present, plausible values, busbw = algbw * 2(n-1)/n,
# order of the statistics, wrong = 0 everywhere.
. "$(dirname "$0")/../lib.sh"
bin=$1 np=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run="$work/run"

mpi "$np" "$bin" run h2d allreduce --backend host --out "$run" --min-bytes 8 --max-bytes 1M \
    --trials 5 --warmup 2 --trial-ms 1 --quiet >"$work/stdout" 2>"$work/stderr"
rc=$?
[ "$rc" = 0 ] || { cat "$work/stderr" >&2; fail "run exited $rc"; finish; }
csv="$run/results.csv"
[ -f "$csv" ] || { fail "no results.csv"; finish; }
[ ! -e "$csv.tmp" ] || fail "a temporary file was left behind"

expected="run_id,bench,case,backend,transport,nodes,ranks,src,dst,batch,bytes,count,dtype,redop,iters,metric,unit,samples,median,p05,p95,min,max,mean,stddev,wrong"
[ "$(head -n 1 "$csv")" = "$expected" ] || fail "header is $(head -n 1 "$csv")"

# Per-row checks. Fields: 2 bench 3 case 4 backend 5 transport 6 nodes 7 ranks 8 src 11 bytes
# 12 count 13 dtype 16 metric 17 unit 18 samples 19 median 20 p05 21 p95 22 min 23 max 26 wrong
awk -F, -v np="$np" -v run_id="$(basename "$run")" '
NR == 1 { next }
{
    rows++
    where = "row " NR " (" $2 " " $3 " " $11 " " $16 ")"
    if ($1 != run_id) bad(where, "run_id " $1)
    if ($4 != "host") bad(where, "backend " $4)
    if ($6 != 1) bad(where, "nodes " $6)
    if ($18 != 5) bad(where, "samples " $18)
    if ($26 != "0") bad(where, "wrong = " $26)
    if (!($22 <= $20 && $20 <= $19 && $19 <= $21 && $21 <= $23)) bad(where, "min <= p05 <= median <= p95 <= max fails")
    # one rank: busbw is 0 by definition, and an in-place all-reduce moves nothing
    if ($19 <= 0 && !(np == 1 && $16 == "busbw")) bad(where, "median " $19 " not positive")
    if ($17 == "GB/s" && $19 > 2000 && !(np == 1 && $2 == "allreduce")) bad(where, "implausible " $19 " GB/s")
    if ($2 == "allreduce") {
        if ($5 != "mpi") bad(where, "transport " $5)
        if ($7 != np) bad(where, "ranks " $7)
        if ($13 != "float32" || $12 * 4 != $11) bad(where, "count/dtype " $12 " " $13)
        if ($16 == "algbw") algbw[$3 "," $11] = $19
        if ($16 == "busbw") busbw[$3 "," $11] = $19
        if ($16 == "time") { t[$3 "," $11] = $19; ar_points++ }
    } else if ($2 == "h2d") {
        if ($5 != "memcpy") bad(where, "transport " $5)
        if ($16 == "time") h2d_time++
        if ($16 == "bandwidth" && $7 == 1) alone[$3 "," $8]++
        if ($16 == "bandwidth_total") together[$3]++
    } else bad(where, "unexpected bench " $2)
}
function bad(where, what) { print "FAIL: " where ": " what > "/dev/stderr"; errors++ }
END {
    factor = 2 * (np - 1) / np
    for (k in algbw) {
        split(k, parts, ",")
        # algbw = bytes / time: medians of a monotone function commute
        want = parts[2] / t[k] / 1e3
        if (want > 0 && (algbw[k] / want > 1.001 || algbw[k] / want < 0.999)) bad(k, "algbw " algbw[k] " != bytes/time " want)
        if (factor == 0 && busbw[k] != 0) bad(k, "busbw " busbw[k] " should be 0 on one rank")
        if (factor > 0 && (busbw[k] / algbw[k] > factor * 1.001 || busbw[k] / algbw[k] < factor * 0.999)) bad(k, "busbw/algbw " busbw[k] / algbw[k] " != " factor)
    }
    # allreduce: 8 B .. 1 MiB by 2 = 18 sizes, out of place and in place
    if (ar_points != 36) bad("allreduce", ar_points " points, expected 36")
    # h2d: 8 B .. 1 MiB by 4 = 9 sizes; each of the 4 variants alone on every rank...
    for (v = 0; v < 4; v++) {
        name = v == 0 ? "pinned_h2d" : v == 1 ? "pinned_d2h" : v == 2 ? "pageable_h2d" : "pageable_d2h"
        for (r = 0; r < np; r++) if (alone[name "," r] != 9) bad("h2d", name " rank " r " alone: " alone[name "," r] " sizes, expected 9")
        # ...and, with several ranks, all at once
        if (np > 1 && together[name] != 9) bad("h2d", name " all ranks: " together[name] " sizes, expected 9")
    }
    exit errors ? 1 : 0
}' "$csv" || fail "CSV content checks failed"

# The sizes really swept, not just counted: the allreduce byte column holds 8..1M.
sizes=$(awk -F, '$2 == "allreduce" && $16 == "time" && $3 == "in_place" { print $11 }' "$csv" | tr '\n' ' ')
[ "$sizes" = "8 16 32 64 128 256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144 524288 1048576 " ] ||
    fail "allreduce sizes are: $sizes"

# env.json: complete, and the fingerprint has what a regression hunt needs.
env="$run/env.json"
grep -Eq '"run_status":[[:space:]]*"complete"' "$env" || fail "env.json not marked complete"
for key in host kernel cpu_model sockets numa_nodes memory_bytes ranks cpus binding nccl mpi \
    cuda_aware hwloc infiniband environment fabricbench git_commit driver runtime; do
    grep -q "\"$key" "$env" || fail "env.json lacks \"$key\""
done
nranks=$(grep -c '"local_rank"' "$env")
[ "$nranks" = "$np" ] || fail "env.json lists $nranks ranks, expected $np"
grep -q "results: $run/results.csv" "$work/stdout" || fail "stdout does not say where the results are"
grep -q "headline" "$work/stdout" || fail "stdout has no headline table"
[ -s "$run/fabricbench.log" ] || fail "the run log is empty"
finish
