#!/bin/sh
# The prepared GPU check: doctor, then h2d, allreduce and densenet_allreduce on one GPU (NCCL
# with one rank), then p2p between two processes sharing that GPU (CUDA IPC; MPI send/recv, since
# NCCL refuses two ranks on one GPU), then the kernels' self-checks (kernels.txt, engine.txt),
# then the training-step pieces: pipeline (all the node's cores), compute (ours against cuBLAS,
# fp16 and bf16) and memfit, and PyTorch's own DenseNet-121 step when torch is installed
# (torch.txt), each result kept under $OUT (or ./gpu-check). Tried first on the host backend (FB_BACKEND=host) where no GPU exists.
# On a bare GPU host without MPI, unpack Open MPI from Debian packages first and set MPIRUN
# (docs/gpu-check.md); with no mpirun at all the binary runs as an MPI singleton.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${FB_BIN:-$top/build/bench/fabricbench}
out=${OUT:-$PWD/gpu-check}
backend=${FB_BACKEND:-auto}
mpirun=${MPIRUN:-mpirun}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$out"
have_mpirun() { command -v "$mpirun" >/dev/null 2>&1; }
launch() { if have_mpirun; then "$mpirun" -np 1 "$@"; else "$@"; fi; }
{
    echo "== $(date -u +%FT%TZ) $(hostname)"
    command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv
    "$bin" --version
} >"$out/versions.txt" 2>&1
launch "$bin" doctor --backend "$backend" --json "$out/doctor.json" >"$out/doctor.txt" 2>&1
echo "doctor exit $?" >>"$out/doctor.txt"
# NCCL's INFO log lands in the run folder by itself (nccl-rank<N>.log).
launch "$bin" run h2d allreduce densenet_allreduce --backend "$backend" --out "$out/run" --force \
    --quiet >"$out/run.txt" 2>&1
rc=$?
echo "run exit $rc" >>"$out/run.txt"
p2p_rc=0
if have_mpirun; then
    "$mpirun" -np 2 --oversubscribe "$bin" run p2p --backend "$backend" --coll mpi \
        --allow-oversubscribe --out "$out/p2p" --force --quiet >"$out/p2p.txt" 2>&1
    p2p_rc=$?
    echo "p2p exit $p2p_rc" >>"$out/p2p.txt"
else
    echo "p2p skipped: two processes need mpirun" >"$out/p2p.txt"
fi
# The conv, BatchNorm and pool kernels against their CPU references (exit 77: no GPU, skipped).
k_rc=0
: >"$out/kernels.txt"
for t in test_conv_gemm test_pool_kernels; do
    kbin=$(dirname "$bin")/../tests/gpu/$t
    if [ -x "$kbin" ]; then
        "$kbin" >>"$out/kernels.txt" 2>&1
        rc_t=$?
        echo "$t exit $rc_t" >>"$out/kernels.txt"
        [ $rc_t = 0 ] || [ $rc_t = 77 ] || k_rc=$rc_t
    else
        echo "$t not built: $kbin" >>"$out/kernels.txt"
    fi
done
# The compute engine on the GPU against the host engine (exit 77: no GPU, skipped).
ebin=${FB_ENGINE_TEST:-$(dirname "$bin")/../tests/test_conv_engine_cuda}
e_rc=0
if [ -x "$ebin" ]; then
    "$ebin" >"$out/engine.txt" 2>&1
    e_rc=$?
    echo "test_conv_engine_cuda exit $e_rc" >>"$out/engine.txt"
fi
# The training step's pieces. The pipeline gets every core (mpirun binds one rank to one core).
t_rc=0
for prec in fp16 bf16; do
    if have_mpirun; then set -- "$mpirun" -np 1 --bind-to none; else set --; fi
    "$@" "$bin" run pipeline compute memfit --backend "$backend" --precision "$prec" \
        --out "$out/train-$prec" --force --quiet >"$out/train-$prec.txt" 2>&1 || t_rc=$?
    cp "$out/train-$prec/results.csv" "$out/train-$prec-results.csv" 2>/dev/null
done
# PyTorch's DenseNet-121 training step, the figure compute's stand-in is judged against.
if python3 -c "import torch, torchvision" >/dev/null 2>&1; then
    python3 "$top/harness/scripts/torch_densenet_step.py" --batch 32 --resolution 224 >"$out/torch.txt" 2>&1
else
    echo "torch or torchvision not installed: no PyTorch comparison" >"$out/torch.txt"
fi
# One folder deep at most comes back from the device machine: copy the runs' files up.
for f in results.csv env.json; do cp "$out/run/$f" "$out/$f" 2>/dev/null; done
cp "$out"/run/nccl-rank*.log "$out/" 2>/dev/null
cp "$out/p2p/results.csv" "$out/p2p-results.csv" 2>/dev/null
tail -n 25 "$out/run.txt"
tail -n 40 "$out/p2p.txt"
tail -n 3 "$out/kernels.txt"
grep -A14 "^# compute" "$out/train-fp16.txt" | tail -n 14
tail -n 3 "$out/torch.txt"
[ $rc = 0 ] || exit $rc
[ $p2p_rc = 0 ] || exit $p2p_rc
[ $k_rc = 0 ] || [ $k_rc = 77 ] || exit $k_rc
[ $e_rc = 0 ] || [ $e_rc = 77 ] || exit $e_rc
[ $t_rc = 0 ] || exit $t_rc
