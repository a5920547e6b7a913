#!/bin/sh
# Node detection across two "hosts" (network namespaces on this machine, see lib.sh): doctor and
# run on 1 rank per host see 2 nodes, two host names and local ranks 0 and 0, also when the
# launcher's own variables lie (fabricbench must not read them: Slurm sets others); with 2 ranks
# per host bound to a core each, local ranks 0 1 0 1 and doctor's binding PASS (one core number
# on two hosts is two cores); with 2 ranks per host the p2p rows label exactly the inter-node pairs "network", and the allreduce scaling
# curve counts 1, 1 and 2 nodes for its 1, 2 and 4 ranks; the fingerprint has one per-node
# entry (host, GPUs, InfiniBand ports) for each host.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
bin=$1
cluster_up
w=$CL_DIR
small="--sizes 64K --matrix-bytes 64K --latency-bytes 8 --warmup 1 --trials 3 --quiet"

# --- 1 rank per host: doctor's job line, rank table and fingerprint ---
cluster_mpi 1 2 "$bin" doctor --json "$w/fp.json" >"$w/doctor.txt" 2>&1 ||
    fail "doctor on 2 hosts exited $?: $(tail -n 5 "$w/doctor.txt")"
grep -q '^job  *2 rank(s) on 2 node(s)' "$w/doctor.txt" || fail "doctor does not see 2 nodes: $(grep '^job' "$w/doctor.txt")"
# rank table: "rank host local ..."
awk -v a="$CL_HOST_A" -v b="$CL_HOST_B" '
    $1 == "0" && $2 == a && $3 == "0" { r0 = 1 }
    $1 == "1" && $2 == b && $3 == "0" { r1 = 1 }
    END { exit !(r0 && r1) }' "$w/doctor.txt" ||
    fail "doctor's rank table is not rank 0 on $CL_HOST_A and rank 1 on $CL_HOST_B, both local rank 0: $(grep -E '^ +[01] ' "$w/doctor.txt")"
# fingerprint: "nodes": 2, and per rank host / node / local_rank
tr -d ' \t' <"$w/fp.json" | grep -q '^"nodes":2,' || fail "env.json of doctor does not say nodes 2"
facts=$(tr -d ' \t\n' <"$w/fp.json" | grep -o '"local_rank":[0-9]*,"node":[0-9]*,"host":"[^"]*"' | tr '\n' ' ')
[ "$facts" = "\"local_rank\":0,\"node\":0,\"host\":\"$CL_HOST_A\" \"local_rank\":0,\"node\":1,\"host\":\"$CL_HOST_B\" " ] ||
    fail "per-rank facts in the fingerprint are wrong: $facts"

# the per-node block accept judges every node from: both hosts once, each with its ports
python3 - "$w/fp.json" "$CL_HOST_A" "$CL_HOST_B" >"$w/hosts.txt" 2>&1 <<'PY' ||
import json, sys
hosts = json.load(open(sys.argv[1]))["hosts"]
got = [(h["node"], h["host"], h["ranks"]) for h in hosts]
assert got == [(0, sys.argv[2], 1), (1, sys.argv[3], 1)], got
assert all("gpus" in h and "infiniband" in h for h in hosts), hosts
PY
    fail "env.json of doctor on 2 hosts lacks a per-node entry for each: $(cat "$w/hosts.txt")"

# --- the same with the launchers' variables lying: the answer must not change ---
cluster_mpi 1 2 env OMPI_COMM_WORLD_LOCAL_RANK=5 OMPI_COMM_WORLD_LOCAL_SIZE=9 \
    OMPI_COMM_WORLD_NODE_RANK=5 SLURM_LOCALID=3 SLURM_NODEID=7 SLURM_JOB_NUM_NODES=9 \
    MPI_LOCALRANKID=4 PMI_LOCAL_RANK=6 "$bin" doctor >"$w/lying.txt" 2>&1 ||
    fail "doctor with lying launcher variables exited $?"
grep -q '^job  *2 rank(s) on 2 node(s)' "$w/lying.txt" && awk '$1 ~ /^[01]$/ && $3 != "0" { bad = 1 } END { exit bad }' "$w/lying.txt" ||
    fail "launcher variables changed node detection: $(grep -E '^(job| +[01] )' "$w/lying.txt")"

# --- 2 ranks per host, one core each: local ranks 0 1 0 1, and the same cores used on both
# hosts are no conflict (each host has its own cores) ---
cluster_mpi 2 4 --bind-to core "$bin" doctor >"$w/bound.txt" 2>&1 || fail "doctor on 2x2 bound ranks exited $?"
locals=$(awk '$1 ~ /^[0-3]$/ && NF >= 4 { printf "%s:%s:%s ", $1, $2, $3 }' "$w/bound.txt")
[ "$locals" = "0:$CL_HOST_A:0 1:$CL_HOST_A:1 2:$CL_HOST_B:0 3:$CL_HOST_B:1 " ] ||
    fail "ranks, hosts and local ranks of 2x2 are '$locals'"
grep -Eq '^PASS +binding ' "$w/bound.txt" ||
    fail "cores bound on two hosts are taken as shared: $(grep binding "$w/bound.txt")"

# --- run on 1 rank per host: every row says 2 nodes where both ranks take part ---
cluster_mpi 1 2 "$bin" run p2p $small --out "$w/r2" >"$w/r2.txt" 2>&1 || fail "run on 2 hosts exited $?: $(tail -n 5 "$w/r2.txt")"
grep -q '"nodes":2,' "$w/r2/env.json" 2>/dev/null || tr -d ' \t' <"$w/r2/env.json" | grep -q '^"nodes":2,' ||
    fail "the run's env.json does not say nodes 2"
n=$(csv_awk 'v("case") == "sweep_uni" && v("metric") == "bandwidth" && v("nodes") == 2 && v("link") == "network" { n++ } END { print n + 0 }' "$w/r2/results.csv")
[ "$n" -ge 1 ] || fail "the p2p sweep 0>1 between the hosts has no row with nodes 2 and link network"

# --- 2 ranks per host: pair labels and the scaling curve across nodes ---
cluster_mpi 2 4 "$bin" run p2p allreduce $small --ranks 1,2,4 --out "$w/r4" >"$w/r4.txt" 2>&1 ||
    fail "run on 2x2 ranks exited $?: $(tail -n 5 "$w/r4.txt")"
csv_awk 'v("bench") == "p2p" && v("transport") == "mpi" && v("src") != "" && v("dst") != "" {
        net = (v("src") < 2) != (v("dst") < 2)
        if (net != (v("link") == "network")) { print "rank " v("src") " and rank " v("dst") " labelled \"" v("link") "\" (" v("case") ")"; bad++ }
        seen[v("src") ":" v("dst")] = 1
    }
    END { for (a = 0; a < 4; a++) for (b = 0; b < 4; b++) if (a != b && !((a ":" b) in seen)) { print "no row for the pair " a ":" b; bad++ }
          exit bad > 0 }' "$w/r4/results.csv" >"$w/labels.txt" || fail "pair labels: $(head -n 4 "$w/labels.txt")"
# the summary's link table says the same
awk '/^# p2p ranks and the link of each pair/ { on = 1; next } on && $1 ~ /^[0-3]$/ { print } on && /^$/ { exit }' "$w/r4.txt" >"$w/table.txt"
[ "$(awk '{ for (j = 2; j <= 5; j++) if ($j == "network") n++ } END { print n + 0 }' "$w/table.txt")" = 8 ] ||
    fail "the printed link table does not have 8 network cells: $(cat "$w/table.txt")"
for r in 1 2 4; do
    want=$([ $r = 4 ] && echo 2 || echo 1)
    got=$(csv_awk 'v("bench") == "allreduce" && v("ranks") == r { print v("nodes") }' r=$r "$w/r4/results.csv" | sort -u | tr '\n' ' ')
    [ "$got" = "$want " ] || fail "allreduce on $r rank(s): nodes column '$got', expected $want"
done
finish
