#!/bin/sh
# The prepared GPU check: doctor, h2d and allreduce on one GPU, each result kept under
# $OUT (or ./gpu-check). Tried first on the host backend (FB_BACKEND=host) where no GPU exists.
# On a bare GPU host without MPI, unpack Open MPI from Debian packages first and set MPIRUN
# (docs/gpu-check.md); with no mpirun at all the binary runs as an MPI singleton.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${FB_BIN:-$top/build/bench/fabricbench}
out=${OUT:-$PWD/gpu-check}
backend=${FB_BACKEND:-auto}
mpirun=${MPIRUN:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
launch() { if command -v "$mpirun" >/dev/null 2>&1; then "$mpirun" -np 1 "$@"; else "$@"; fi; }
{
    echo "== $(date -u +%FT%TZ) $(hostname)"
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv
    "$bin" --version
} >"$out/versions.txt" 2>&1
launch "$bin" doctor --backend "$backend" --json "$out/doctor.json" >"$out/doctor.txt" 2>&1
echo "doctor exit $?" >>"$out/doctor.txt"
NCCL_DEBUG=INFO NCCL_DEBUG_FILE="$out/nccl.%h.%p.log" \
    launch "$bin" run h2d allreduce --backend "$backend" --out "$out/run" --force --quiet \
    >"$out/run.txt" 2>&1
rc=$?
echo "run exit $rc" >>"$out/run.txt"
# One folder deep at most comes back from the device machine: copy the run's files up.
for f in results.csv env.json; do cp "$out/run/$f" "$out/$f" 2>/dev/null; done
tail -n 25 "$out/run.txt"
exit $rc
