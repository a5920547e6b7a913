#!/bin/sh
# fabricbench under a real Slurm (slurm_lib.sh: munge, slurmctld, a slurmd on each of the two
# namespace hosts of lib.sh), launched the ways docs/slurm.md tells users to:
#   - srun --mpi=pmix doctor on 2 nodes: 2 ranks on 2 nodes, and every fix line names srun's
#     options, never mpirun's (the job's launcher, env.json's mpi.launcher = srun);
#   - srun run across the nodes: rows with nodes 2, the pair between the hosts labelled network,
#     and the job's SLURM_* variables recorded in env.json;
#   - srun locate and soak on 2 nodes: no suspect, 4 healthy intervals; locate with host B hung
#     in phase 1: exit 3, host B named for no answer in nodes.csv and drain.txt;
#   - the batch script of docs/slurm.md through sbatch, as shipped but for the run's options (its
#     arguments): the doctor JSON and the run folder it names, 8 ranks on 2 nodes;
#   - sweep inside an allocation (salloc): launcher auto picks srun.
# usage: slurm.sh FABRICBENCH DOCS_SLURM_MD
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_lib.sh"
bin=$1 doc=$2
cluster_up
slurm_up
w=$CL_DIR
# Open MPI over the veth between the hosts; the variables reach the ranks through srun's
# --export=ALL, the default
export OMPI_MCA_btl_tcp_if_include=$CL_SUBNET OMPI_MCA_oob_tcp_if_include=$CL_SUBNET
small="--backend host --sizes 64K --matrix-bytes 64K --latency-bytes 8 --warmup 1 --trials 3 --quiet"

# --- doctor under srun: the job, and fixes in srun's words ---
slurm_in srun -N2 -n2 --mpi=pmix "$bin" doctor --json "$w/doctor.json" >"$w/doctor.txt" 2>&1 ||
    fail "srun doctor exited $?: $(tail -n 5 "$w/doctor.txt")"
grep -q '^job  *2 rank(s) on 2 node(s)' "$w/doctor.txt" ||
    fail "doctor under srun does not see 2 ranks on 2 nodes: $(grep '^job' "$w/doctor.txt")"
[ "$(json_field "$w/doctor.json" mpi.launcher)" = srun ] ||
    fail "env.json's mpi.launcher under srun is '$(json_field "$w/doctor.json" mpi.launcher)'"
grep -q '^ *fix: ' "$w/doctor.txt" || fail "doctor printed no fix line (the ranks are unbound: a binding fix is expected)"
grep '^ *fix: ' "$w/doctor.txt" | grep -E 'mpirun|--map-by|--bind-to' >"$w/wrong_fix.txt" &&
    fail "doctor under srun advises mpirun's options: $(head -n 2 "$w/wrong_fix.txt")"
grep -q '^ *fix: srun --cpu-bind=' "$w/doctor.txt" ||
    fail "doctor's binding fix under srun is not srun --cpu-bind: $(grep -A1 binding "$w/doctor.txt")"

# --- run across the two nodes, 2 ranks on each ---
slurm_in srun -N2 --ntasks-per-node=2 --mpi=pmix "$bin" run p2p allreduce $small --out "$w/run" \
    >"$w/run.txt" 2>&1 || fail "srun run exited $?: $(tail -n 5 "$w/run.txt")"
csv_awk 'v("bench") == "p2p" && v("src") != "" && v("dst") != "" {
        net = (v("src") < 2) != (v("dst") < 2)
        if (net != (v("link") == "network")) { print "ranks " v("src") " and " v("dst") " labelled " v("link"); bad++ }
    }
    v("bench") == "allreduce" && v("ranks") == 4 && v("nodes") != 2 { print "allreduce on 4 ranks, nodes " v("nodes"); bad++ }
    v("bench") == "allreduce" && v("ranks") == 4 { all4++ }
    END { if (!all4) { print "no allreduce row on 4 ranks"; bad++ } exit bad > 0 }' "$w/run/results.csv" >"$w/run.bad" ||
    fail "the run under srun: $(head -n 3 "$w/run.bad")"
[ "$(json_field "$w/run/env.json" nodes)" = 2 ] || fail "the run's env.json says nodes '$(json_field "$w/run/env.json" nodes)'"
grep -q '"SLURM_JOB_ID"' "$w/run/env.json" || fail "the run's env.json does not record SLURM_JOB_ID"

# --- locate and soak under srun, one rank per node ---
slurm_in srun -N2 -n2 --mpi=pmix "$bin" locate --bytes 64K --trials 3 --timeout 60 --quiet \
    --out "$w/locate" >"$w/locate.txt" 2>&1
rc=$?
# locate launched by srun on 2 nodes: it runs to its end and writes its folder. Two nodes judge
# nothing (a node, pair or rank is judged against 3 or more: locate_two checks the SKIPs), so
# "no suspect" here says the launch worked, not that the nodes are healthy.
[ "$rc" = 0 ] || fail "srun locate exited $rc: $(tail -n 5 "$w/locate.txt")"
grep -q '^locate: no suspect among 2 node(s)' "$w/locate.txt" || fail "locate under srun: $(grep '^locate:' "$w/locate.txt" | head -n 1)"
[ -f "$w/locate/suspects.csv" ] || fail "locate under srun wrote no suspects.csv"
# A node that hangs under srun (FB_TEST_HANG, test only; --timeout 8: the timeout bounds MPI's start
# too, and srun's PMIx start of two hosts once took over 4 s beside the whole suite, so rank 0
# stopped before MPI_Init returned: 2026-12-06, docs/testing.md round seventeen). In its first trial
# of phase 1: rank 1 (host B): rank 0 names host B for no answer in the node table and drain.txt
# before it stops the job; srun ends the step and reports rank 0's exit code 3. Rank 0 (host A):
# rank 0 cannot write, so the deputy (rank 1, host B) names host A in the same files of rank 0's run
# folder, says so in locate.md and stops the step (exit code 3). In the tournament (phase 2): rank 1
# (host B) hangs while rank 0, its partner, waits on it; rank 1's watchdog tells rank 0 over MPI
# (locate runs at MPI_THREAD_MULTIPLE) that it was still working, and rank 0 names host B as hung
# (its pairs check) and drains it.
for hang in 1:locate_node 0:locate_node 1:locate_pairs; do
    hr=${hang%%:*} bench=${hang#*:}
    if [ "$hr" = 1 ]; then hung=$CL_HOST_B; else hung=$CL_HOST_A; fi
    FB_TEST_HANG="$hr:$bench:trial 1" slurm_in srun -N2 -n2 --mpi=pmix "$bin" locate --bytes 64K \
        --trials 3 --timeout 8 --quiet --out "$w/hung$hr$bench" >"$w/hung$hr$bench.txt" 2>&1
    rc=$?
    [ "$rc" = 3 ] || fail "srun locate with rank $hr's node hung in $bench exited $rc, expected 3: $(tail -n 5 "$w/hung$hr$bench.txt")"
    got=$(csv_awk 'v("verdict") == "FAIL" { print v("node") ":" v("check") }' "$w/hung$hr$bench/nodes.csv" 2>/dev/null | sort | tr '\n' ' ')
    if [ "$bench" = locate_node ]; then
        [ "$got" = "$hung:allreduce $hung:compute $hung:h2d $hung:p2p " ] ||
            fail "rank $hr's node hung: the table FAILs '$got', expected $hung's four phase-1 checks"
        reason="no answer (hung or dead)"
    else
        [ "$got" = "$hung:pairs " ] ||
            fail "rank $hr's node hung in the tournament: the table FAILs '$got', expected $hung's pairs"
        grep -q "the job's view: rank 1 on $hung working in 'trial 1/3' of locate_pairs" "$w/hung$hr$bench.txt" ||
            fail "rank 0's watchdog does not name rank 1 on $hung as working: $(grep 'error: timeout' "$w/hung$hr$bench.txt")"
        reason="hung (still working at the timeout)"
    fi
    grep -qx "scontrol update NodeName='$hung' State=DRAIN Reason='fabricbench locate: slow node: $reason (figures in suspects.csv)'" "$w/hung$hr$bench/drain.txt" ||
        fail "drain.txt does not drain $hung for '$reason': $(cat "$w/hung$hr$bench/drain.txt" 2>/dev/null)"
    deputy=$(grep -c "^Written by the deputy, rank 1 on $CL_HOST_B:" "$w/hung$hr$bench/locate.md" 2>/dev/null)
    [ "$deputy" = "$((1 - hr))" ] || fail "rank $hr's node hung: locate.md names the deputy $deputy time(s), expected $((1 - hr))"
done
# The soak runs on a loaded 2-core machine beside the rest of the suite, where one interval at 4x
# its baseline (CI, 2026-12-05) is weather, not a fault: a 10000 % tolerance keeps the verdict on
# what this test is about (soak runs through srun and writes every interval).
slurm_in srun -N2 -n2 --mpi=pmix "$bin" soak --duration 4 --interval 1 --sizes 64K --trials 2 \
    --warmup 0 --tolerance 10000 --quiet --out "$w/soak" >"$w/soak.txt" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "srun soak exited $rc: $(tail -n 5 "$w/soak.txt")"
[ "$(awk -F, 'NR > 1 && $3 == "all" { n[$1] = 1 } END { print length(n) }' "$w/soak/soak.csv" 2>/dev/null)" = 4 ] ||
    fail "soak under srun did not write 4 intervals: $(cat "$w/soak/soak.csv" 2>/dev/null | head -n 3)"

# --- the batch script of docs/slurm.md, through sbatch ---
awk '/^## An example batch script/ { on = 1; next } on && /^```sh$/ { inblock = 1; next }
     inblock && /^```$/ { exit } inblock' "$doc" >"$w/job.sbatch"
grep -q '^#SBATCH --nodes=2$' "$w/job.sbatch" && grep -q '^#SBATCH --ntasks-per-node=4$' "$w/job.sbatch" ||
    fail "docs/slurm.md's batch script no longer asks for 2 nodes of 4 tasks (this test's cluster)"
mkdir -p "$w/submit/build/bench"
ln -s "$bin" "$w/submit/build/bench/fabricbench"
# A rank that crashes leaves its core in the job's folder (the limit travels with the job:
# PropagateResourceLimits), and its stack is printed here: a segmentation fault of one doctor
# rank was seen in two whole-suite runs and never alone (docs/cluster-tests.md), likely the
# MPI_Init race that slurm_lib.sh's PMIxCollFence=ring now keeps away (docs/slurm.md).
(cd "$w/submit" && { ulimit -c unlimited 2>/dev/null; slurm_in sbatch --wait --output=job.out "$w/job.sbatch" allreduce $small; }) \
    >"$w/sbatch.txt" 2>&1 || {
    fail "sbatch --wait of docs/slurm.md's script exited $?: $(tail -n 3 "$w/sbatch.txt") $(tail -n 8 "$w/submit/job.out")"
    # Open MPI's "system call failed" notice names the call and the file (seen: errno 2,
    # docs/testing.md round eleven)
    grep -B 8 -A 2 'errno' "$w/submit/job.out" | head -n 40 >&2
    for c in "$w"/submit/core*; do
        [ -f "$c" ] && command -v gdb >/dev/null 2>&1 &&
            gdb -batch -ex 'thread apply all bt 12' "$bin" "$c" 2>&1 | grep -E '^(Thread|#)' | head -n 60 >&2
    done
}
job=$(sed -n 's/^Submitted batch job \([0-9]*\)$/\1/p' "$w/sbatch.txt")
[ -n "$job" ] || fail "sbatch did not say the job's number: $(cat "$w/sbatch.txt")"
out=$w/submit/results/slurm-$job
[ -s "$out-doctor.json" ] || fail "the batch job wrote no $out-doctor.json"
[ "$(json_field "$out-doctor.json" nranks)" = 8 ] && [ "$(json_field "$out-doctor.json" nodes)" = 2 ] ||
    fail "the batch job's doctor saw ranks '$(json_field "$out-doctor.json" nranks)', nodes '$(json_field "$out-doctor.json" nodes)'"
[ -s "$out/results.csv" ] || fail "the batch job wrote no $out/results.csv: $(tail -n 8 "$w/submit/job.out")"
grep -Eq '"run_status":[[:space:]]*"complete"' "$out/env.json" 2>/dev/null || fail "the batch job's run is not complete"
[ "$(json_field "$out/env.json" nranks)" = 8 ] || fail "the batch job's run has ranks '$(json_field "$out/env.json" nranks)'"

# --- sweep in an allocation: srun, found by itself ---
slurm_in salloc -N2 -n2 "$bin" sweep --np 2 --binding none --no-report --out "$w/sweep" -- \
    run allreduce $small >"$w/sweep.txt" 2>&1 || fail "sweep inside salloc exited $?: $(tail -n 5 "$w/sweep.txt")"
grep -q "^run: srun --ntasks 2 " "$w/sweep/launch.txt" 2>/dev/null ||
    fail "sweep inside an allocation did not launch with srun: $(grep '^run:' "$w/sweep/launch.txt" 2>/dev/null)"
[ "$(json_field "$w/sweep/env.json" mpi.launcher)" = srun ] && [ "$(json_field "$w/sweep/env.json" nodes)" = 2 ] ||
    fail "sweep's run says launcher '$(json_field "$w/sweep/env.json" mpi.launcher)', nodes '$(json_field "$w/sweep/env.json" nodes)'"
grep -q '^status: ok$' "$w/sweep/launch.txt" || fail "sweep's srun launch did not end ok: $(tail -n 5 "$w/sweep.txt")"
finish
