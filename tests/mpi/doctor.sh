#!/bin/sh
# doctor under mpirun: every check is reported with a verdict; the binding check follows the
# launcher's binding (bound to one core each: PASS; unbound: WARN with the mpirun fix; as a Slurm
# step, the srun fix); no GPU is a WARN that names the reason; --json writes the fingerprint and
# the launcher; the exit code follows FAIL.
. "$(dirname "$0")/../lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mpi 2 --bind-to core "$bin" doctor --json "$work/fp.json" >"$work/bound.txt" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "doctor (bound) exited $rc: $(cat "$work/bound.txt")"
for check in gpu_build gpu_visible one_rank_per_gpu binding mpi_cuda_aware infiniband; do
    grep -Eq "^(PASS|WARN|FAIL) +$check " "$work/bound.txt" || fail "no verdict for $check"
done
grep -Eq '^PASS +binding ' "$work/bound.txt" || fail "ranks bound to a core each are not PASS: $(grep binding "$work/bound.txt")"
grep -Eq '^WARN +gpu_visible .*(no NVIDIA driver found|built without CUDA|sees no GPU)' "$work/bound.txt" ||
    fail "no GPU is not a WARN with its reason"
grep -Eq '"run_status"|"ranks"' "$work/fp.json" || fail "--json wrote no fingerprint"
[ "$(grep -c '"local_rank"' "$work/fp.json")" = 2 ] || fail "--json does not list 2 ranks"

mpi 2 --bind-to none "$bin" doctor >"$work/unbound.txt" 2>&1
rc=$?
grep -Eq '^WARN +binding ' "$work/unbound.txt" || fail "unbound ranks are not WARN: $(grep binding "$work/unbound.txt")"
grep -q -- '--map-by core --bind-to core' "$work/unbound.txt" || fail "the binding fix does not show the mpirun options"
[ "$rc" = 0 ] || fail "doctor exited $rc with only warnings"
grep -q '"launcher":[[:space:]]*"mpirun"' "$work/fp.json" || fail "env.json's mpi.launcher is not mpirun"

# a step of Slurm's (SLURM_STEP_ID, no ORTE: srun --mpi=pmix; here one rank started alone, which
# Open MPI's singleton tolerates): the fix names srun's options, never mpirun's (issue 28)
SLURM_STEP_ID=0 "$bin" doctor --backend host --json "$work/srun.json" >"$work/srun.txt" 2>&1 ||
    fail "doctor as a Slurm step exited $?: $(tail -n 3 "$work/srun.txt")"
grep -q -- 'fix: srun --cpu-bind=cores' "$work/srun.txt" || fail "under srun the binding fix is: $(grep 'fix:.*bind' "$work/srun.txt")"
grep -q 'mpirun' "$work/srun.txt" && fail "under srun doctor still speaks of mpirun: $(grep mpirun "$work/srun.txt")"
grep -q '"launcher":[[:space:]]*"srun"' "$work/srun.json" || fail "env.json's mpi.launcher is not srun"

"$bin" doctor --bogus >"$work/bad.txt" 2>&1
rc=$?
[ "$rc" = 2 ] || fail "doctor --bogus exited $rc, expected 2"
finish
