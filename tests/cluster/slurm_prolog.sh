#!/bin/sh
# `fabricbench health` as Slurm's job Prolog, run by a real slurmd (slurm_lib.sh) before each job
# on each of its nodes, every sysfs read from a tree of its own ($FB_SYSFS_ROOT, copies of
# tests/data/sysfs) against a profile of 1 GPU and 1 ACTIVE InfiniBand port at 100 Gb/s, with
# host B's port at 56 Gb/s:
#   - prolog `health --drain`: a job step on host B fails ("Job prolog failed"), B ends DRAIN
#     with health's line as its reason in `sinfo -R`; host A stays idle and runs the next job;
#   - B resumed (still wrong), prolog `health` without --drain: the job fails again and Slurm
#     drains B itself, with its own reason "Prolog error" (health's line only in its log):
#     docs/slurm.md's advice to give the prolog --drain rests on this.
# usage: slurm_prolog.sh FABRICBENCH SYSFS_TREE
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm_lib.sh"
bin=$1 tree=$2
cluster_up
w=$CL_DIR
health_nodes "$tree"
# prolog [--drain]: the wrapper slurm.conf's Prolog names, with or without --drain
prolog() { health_wrapper "$w/prolog.sh" prolog "$@"; }
prolog --drain
echo "56 Gb/sec (4X FDR)" >"$w/sysfs-$CL_HOST_B/class/infiniband/mlx5_0/ports/1/rate"
SL_PROLOG=$w/prolog.sh slurm_up

slurm_in timeout 60 srun -N1 -w "$CL_HOST_B" hostname >"$w/b.out" 2>&1
rc=$?
[ "$rc" != 0 ] || fail "a job ran on host B, whose prolog fails: $(cat "$w/b.out")"
grep -q "Job prolog failed" "$w/b.out" || fail "srun does not say the prolog failed: $(cat "$w/b.out")"
wait_state "$CL_HOST_B" drain || fail "host B is '$(state_of "$CL_HOST_B")', expected drain"
r=$(reason_of "$CL_HOST_B")
[ "$r" = "fabricbench health: InfiniBand mlx5_0/1 at 56 Gb/s, expected at least 100" ] ||
    fail "host B's drain reason is '$r', expected health's line"
grep -q "^health $CL_HOST_B: FAIL: InfiniBand mlx5_0/1 at 56 Gb/s, expected at least 100" \
    "$w/prolog-$CL_HOST_B.log" || fail "host B's prolog log: $(cat "$w/prolog-$CL_HOST_B.log")"
# the next job lands on host A, whose prolog passes
[ "$(slurm_in timeout 60 srun -N1 hostname 2>&1)" = "$CL_HOST_A" ] || fail "the next job did not run on host A"
# (after the job, host A passes through `comp`: CI once read it there, then idle in the message)
wait_state "$CL_HOST_A" idle || fail "host A is '$(state_of "$CL_HOST_A")', expected idle"
grep -q "^health $CL_HOST_A: OK: " "$w/prolog-$CL_HOST_A.log" || fail "host A's prolog did not say OK"

# without --drain: Slurm drains the node itself, for a reason of its own
prolog
slurm_in scontrol update NodeName="$CL_HOST_B" State=RESUME || fail "scontrol resume failed"
slurm_in timeout 60 srun -N1 -w "$CL_HOST_B" hostname >"$w/b2.out" 2>&1 && fail "a job ran on host B"
wait_state "$CL_HOST_B" drain || fail "host B is '$(state_of "$CL_HOST_B")', expected drain"
r=$(reason_of "$CL_HOST_B")
[ "$r" = "Prolog error" ] || fail "host B's reason without --drain is '$r', expected Slurm's 'Prolog error'"
echo "prolog --drain: host B drained for '$(grep FAIL "$w/prolog-$CL_HOST_B.log" | head -n 1 | sed 's/.*FAIL: //')'; without --drain: '$r'"
finish
