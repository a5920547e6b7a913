#!/bin/sh
# The prepared GPU check (docs/gpu-check.md): doctor; h2d, allreduce and densenet_allreduce on one
# GPU; p2p between two processes sharing it; the other collectives (all_gather ... reduce), replay
# of the DenseNet-121 mix and a 20 s soak on one GPU (FB_CHECK_SOAK_S); the kernels' self-checks;
# pipeline (once), compute (ours against cuBLAS, fp16 and bf16) and memfit, then a step at memfit's
# batch; PyTorch's copies and DenseNet-121 step as peers; each step under `timeout` within an
# 8-minute budget, everything under $OUT (or ./gpu-check) and the table of truth in $OUT/summary.md
# (gpu-summary.sh).
# Beside fabricbench-bundle.tar.xz (gpu-bundle.sh) it unpacks that and runs from it.
# FB_CHECK_DRY_RUN=TFLOPS,GBPS,MEMORY (an H200: 989,4800,141G) checks the budget before any GPU:
# each fabricbench step runs `run --dry-run` on host-strict with that device memory (memfit for
# real, to size the step), the others count their typical time (docs/gpu-check.md); a step whose
# plan passes its limit, or plans that add up past the budget, fail the check.
# Exit: 0 when every step passed; 1 when a step failed, timed out or a test binary is missing.
# Usage: OUT=DIR sh gpu-check.sh (no arguments: what it does is set by the variables above and
# in docs/gpu-check.md).
set -u
case $# in
0) ;;
*)
    case $1 in -h | --help) echo "usage: [OUT=DIR] [FB_BACKEND=...] sh gpu-check.sh (no arguments; docs/gpu-check.md)"; exit 0 ;; esac
    echo "gpu-check: takes no arguments, not '$1' (usage: [OUT=DIR] sh gpu-check.sh; docs/gpu-check.md)" >&2
    exit 2 ;;
esac
here=$(CDPATH='' cd -- "$(dirname -- "$0")" && pwd)
out=${OUT:-$PWD/gpu-check}
# absolute, so that no awk below reads a folder named like "node=gpu01" as an assignment
case $out in /*) ;; *) out=$PWD/$out ;; esac
backend=${FB_BACKEND:-auto}
budget_s=${FB_CHECK_BUDGET_S:-480}
case $budget_s in '' | *[!0-9]* | 0) echo "gpu-check: FB_CHECK_BUDGET_S must be a whole number of seconds above 0, not '$budget_s'" >&2; exit 2 ;; esac
# the soak's --tolerance (percent; the soak's own default is 10)
soak_tolerance=${FB_CHECK_SOAK_TOLERANCE:-10}
case $soak_tolerance in '' | *[!0-9]*) echo "gpu-check: FB_CHECK_SOAK_TOLERANCE must be a whole number of percent, not '$soak_tolerance'" >&2; exit 2 ;; esac
# the soak's --duration (seconds, 4 to 9999, default 20): intervals of a quarter of it, rounded
# down to whole seconds (four for a multiple of 4, up to seven: 7 s gives seven of 1 s)
soak_s=${FB_CHECK_SOAK_S:-20}
case $soak_s in '' | *[!0-9]* | [0-3] | 0* | ?????*) echo "gpu-check: FB_CHECK_SOAK_S must be a whole number of seconds from 4 to 9999, not '$soak_s'" >&2; exit 2 ;; esac
# a dry run's described GPU: peak TFLOP/s, memory GB/s, memory (a size)
dry= devmem= planned=0
if [ -n "${FB_CHECK_DRY_RUN-}" ]; then
    case $FB_CHECK_DRY_RUN in
    *[!0-9.,KMG]* | *,*,*,* | ,* | *,) bad_dry=1 ;;
    *,*,?*) bad_dry= ;;
    *) bad_dry=1 ;;
    esac
    [ -z "$bad_dry" ] || { echo "gpu-check: FB_CHECK_DRY_RUN must be TFLOPS,GBPS,MEMORY (an H200: 989,4800,141G), not '$FB_CHECK_DRY_RUN'" >&2; exit 2; }
    devmem="--device-memory ${FB_CHECK_DRY_RUN##*,}"
    dry="--dry-run ${FB_CHECK_DRY_RUN%,*} $devmem"
    backend=host-strict
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
host_ld=${LD_LIBRARY_PATH-}
if [ -f "$here/fabricbench-bundle.tar.xz" ]; then
    # The bundle: its own Open MPI and libraries, unpacked into a folder of its own.
    command -v xz >/dev/null 2>&1 ||
        { echo "gpu-check: xz is needed to unpack the bundle" >&2; exit 2; }
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/fb-gpu-check.XXXXXX") || exit 2
    trap 'rm -rf "$tmp"' EXIT
    trap 'exit 130' INT TERM
    tar -C "$tmp" -xJf "$here/fabricbench-bundle.tar.xz" ||
        { echo "gpu-check: cannot unpack $here/fabricbench-bundle.tar.xz" >&2; exit 2; }
    top=$tmp/fabricbench-bundle
    R=$top/ompi/usr
    lib=$R/lib/x86_64-linux-gnu
    # PMIx 4 reads its folders one by one (its libdir does not follow its prefix); hwloc loads
    # no plugins (the host's may be another hwloc's).
    export OPAL_PREFIX=$R PMIX_PREFIX=$lib/pmix2 PMIX_LIBDIR=$lib/pmix2/lib
    export PMIX_DATAROOTDIR=$lib/pmix2/share PMIX_DATADIR=$lib/pmix2/share
    export HWLOC_PLUGINS_PATH=$top/hwloc-plugins
    export OMPI_MCA_mca_base_param_files=$top/ompi/etc/openmpi-mca-params.conf
    export OMPI_MCA_plm=isolated OMPI_MCA_ess_singleton_isolated=1
    export LD_LIBRARY_PATH=$top/lib:$lib:$lib/openmpi/lib${host_ld:+:$host_ld}
    MPIRUN=${MPIRUN:-$R/bin/mpiexec.openmpi}
elif [ -x "$here/../../bin/fabricbench" ] && [ "${here##*/}" = fabricbench ]; then
    # Installed (cmake --install, the .deb): PREFIX/libexec/fabricbench holds this script, its
    # helpers and the GPU tests; the binary is PREFIX/bin/fabricbench.
    top=$(CDPATH='' cd -- "$here/../.." && pwd)
    installed=1
else
    top=$(CDPATH='' cd -- "$here/../.." && pwd)
fi
if [ "${installed:-0}" = 1 ]; then
    bin=${FB_BIN:-$top/bin/fabricbench}
    tests=$here
    scripts=$here
    mixes=$top/share/fabricbench/profiles/mixes
else
    mixes=$top/profiles/mixes
    bin=${FB_BIN:-$top/build/bench/fabricbench}
    tests=$(CDPATH='' cd -- "$(dirname -- "$bin")/.." 2>/dev/null && pwd)/tests
    scripts=$top/harness/scripts
fi
mpirun=${MPIRUN:-mpirun}
# the launcher and the host's library path are split into words where they are used below
case $mpirun$host_ld in *[[:space:]]*)
    echo "gpu-check: the launcher's path ('$mpirun') or LD_LIBRARY_PATH holds a space; set MPIRUN, or TMPDIR for the bundle's, to a path without one" >&2
    exit 2 ;;
esac
mkdir -p "$out" || exit 2
# a second check into the same folder reads nothing of the first: every file it reads is its own
for s in versions doctor run p2p collectives replay soak test_conv_gemm test_pool_kernels \
    test_conv_engine_cuda pipeline train-fp16 train-bf16 memfit fit torch-copy torch-fp16 torch-bf16; do
    rm -f "$out/$s.txt" "$out/$s-results.csv"
done
rm -f "$out/host.txt" "$out/summary.md" "$out/doctor.json" "$out/env.json" "$out"/nccl-rank*.log \
    "$out/soak.csv" "$out/health.csv"
# and the run folders its steps write (a step that fails early leaves the earlier one's there)
for s in run p2p coll replay soak pipeline train-fp16 train-bf16 memfit fit; do
    rm -rf "${out:?}/$s"
done
: >"$out/steps.tsv"
# The budget counts from here, the probes below (NCCL's library, the GPUs' line, torch) included.
t0=$(date +%s)
# probe_limit N: N seconds, or what is left of the budget where that is less; 0 once it is spent,
# and the probe is then not run (timeout's 0 would mean no limit at all).
probe_limit() {
    left=$((budget_s - ($(date +%s) - t0)))
    if [ "$left" -lt "$1" ]; then echo $((left > 0 ? left : 0)); else echo "$1"; fi
}
# NCCL is the host's: FB_NCCL_LIBRARY, or the libnccl.so.2 of a Python environment.
lim=$(probe_limit 30)
if [ -z "${FB_NCCL_LIBRARY-}" ] && [ "$lim" -gt 0 ] && command -v python3 >/dev/null 2>&1; then
    FB_NCCL_LIBRARY=$(LD_LIBRARY_PATH=$host_ld timeout -k 5 "$lim" python3 -c '
import glob, site, sys
dirs = site.getsitepackages() + [site.getusersitepackages(), sys.prefix + "/lib"]
for d in dirs:
    for p in ("nvidia/nccl/lib/libnccl.so.2", "torch/lib/libnccl.so.2", "libnccl.so.2"):
        for f in glob.glob(d + "/" + p):
            print(f); sys.exit(0)' 2>/dev/null)
fi
if [ -n "${FB_NCCL_LIBRARY-}" ]; then
    nccl_dir=$(dirname "$FB_NCCL_LIBRARY")
    export FB_NCCL_LIBRARY LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$nccl_dir
fi

failed=0
# step NAME LIMIT_S CMD...: CMD under timeout, within what is left of the budget; output in
# NAME.txt, the outcome in steps.tsv (name, exit code, seconds, note).
step() {
    name=$1 limit=$2; shift 2
    [ -n "$dry" ] && { plan_step "$name" "$limit" "$@"; return; }
    left=$((budget_s - ($(date +%s) - t0)))
    [ "$left" -lt "$limit" ] && limit=$left
    if [ "$limit" -le 0 ]; then
        printf '%s\t-\t0\tnot run: the %ss budget is spent\n' "$name" "$budget_s" >>"$out/steps.tsv"
        failed=1
        return 1
    fi
    s=$(date +%s)
    timeout -k 10 "$limit" "$@" >"$out/$name.txt" 2>&1
    rc=$?
    note=ok
    [ $rc = 124 ] || [ $rc = 137 ] && note="timed out after ${limit}s"
    [ $rc != 0 ] && [ "$note" = ok ] && note="exit $rc"
    printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$(($(date +%s) - s))" "$note" >>"$out/steps.tsv"
    echo "$name: $note" >>"$out/$name.txt"
    return $rc
}
# A step's typical seconds on an H200 (docs/gpu-check.md's table), for a dry run's steps that
# have no plan of fabricbench's to show.
typical() {
    case $1 in
    versions) echo 1 ;; doctor) echo 5 ;; soak) echo $((soak_s + 5)) ;; memfit) echo 5 ;;
    test_conv_gemm | test_pool_kernels) echo 10 ;; test_conv_engine_cuda) echo 15 ;;
    torch-copy) echo 15 ;; torch-fp16 | torch-bf16) echo 40 ;; *) echo 30 ;;
    esac
}
# plan_step NAME LIMIT_S CMD...: a dry run's step. A `run --dry-run` prints its floor ("plan
# total N points at least S s"); memfit runs for real (it only allocates, on host-strict); the
# others count typical(). The plan must fit the step's limit; steps.tsv gets the plan.
plan_step() {
    name=$1 limit=$2; shift 2
    how="typical time"
    secs=$(typical "$name")
    case " $* " in
    *" --dry-run "* | *" memfit "*)
        timeout -k 10 120 "$@" >"$out/$name.txt" 2>&1 || {
            printf '%s\t-\t0\tdry run failed: exit %s\n' "$name" "$?" >>"$out/steps.tsv"
            failed=1
            return 1
        }
        case " $* " in *" --dry-run "*)
            secs=$(sed -n 's/^plan total [0-9]* points at least \([0-9.]*\) s$/\1/p' "$out/$name.txt")
            [ -n "$secs" ] || { printf '%s\t-\t0\tdry run printed no plan\n' "$name" >>"$out/steps.tsv"; failed=1; return 1; }
            # a step whose benchmarks all waived themselves plans nothing: not a pass
            grep -q '^plan total 0 points' "$out/$name.txt" &&
                { printf '%s\t-\t0\tdry run planned no point\n' "$name" >>"$out/steps.tsv"; failed=1; return 1; }
            secs=$(awk -v s="$secs" 'BEGIN { printf "%d", s == int(s) ? s : int(s) + 1 }')
            how="floor of its run's plans" ;;
        esac ;;
    esac
    planned=$((planned + secs))
    if [ "$secs" -gt "$limit" ]; then
        printf '%s\t-\t%s\tplanned %ss (%s) past its %ss limit\n' "$name" "$secs" "$secs" "$how" "$limit" >>"$out/steps.tsv"
        failed=1
        return 1
    fi
    printf '%s\t0\t%s\tplanned %ss (%s) of its %ss limit\n' "$name" "$secs" "$secs" "$how" "$limit" >>"$out/steps.tsv"
}
# must NAME: the step's failure fails the check.
must() { step "$@" || failed=1; }
# gpu_test NAME PATH LIMIT_S: a self-check binary; missing fails, 77 (no GPU) only on host.
gpu_test() {
    [ -n "$dry" ] && { plan_step "$1" "$3" "$2"; return; }
    if [ ! -x "$2" ]; then
        printf '%s\t-\t0\tmissing: %s (build with CUDA)\n' "$1" "$2" >>"$out/steps.tsv"
        echo "gpu-check: $1 is missing: $2 (build with CUDA)" >&2
        failed=1
        return
    fi
    step "$1" "$3" "$2" && return
    rc=$?
    [ $rc = 77 ] && [ "$backend" = host ] || failed=1
}
have_mpirun() { command -v "$mpirun" >/dev/null 2>&1; }
# One rank under mpirun (a singleton without it); unbound for the training pieces, so that the
# pipeline gets every core (mpirun binds one rank to one core).
launch="" unbound=""
if have_mpirun; then launch="$mpirun -np 1" unbound="$mpirun -np 1 --bind-to none"; fi
# Python runs with the host's libraries, never the bundle's.
host_python="env LD_LIBRARY_PATH=$host_ld python3"
# A run's results.csv copied up: one folder deep at most comes back from the device machine.
keep() { cp "$out/$1/results.csv" "$out/$1-results.csv" 2>/dev/null; }
# The host backend finishes in minutes on a small machine: smaller sweeps and models, short
# trials, a memory budget for memfit (2 images at 64x64, fp32, SGD momentum).
# On a GPU the collectives are NCCL's, asked for: without a loadable libnccl.so.2 the steps fail
# loudly, instead of passing on MPI (auto's fallback).
coll=
[ "$backend" = host ] || [ -n "$dry" ] || coll="--coll nccl"
if [ "$backend" = host ]; then
    res=64 fit="--memory-budget 216M" fit_prec=fp32
    quick="--min-bytes 4K --max-bytes 1M --matrix-bytes 256K --trials 3 --warmup 1 --trial-ms 1"
    quick_train="--threads 2 --batch 2 --trials 3 --warmup 1 --trial-ms 1"
    quick_pipe=$quick_train
    coll_sizes=$quick
else
    res=224 fit="" fit_prec=fp16 quick="" quick_train=""
    # The pipeline sized to its step (issue 29): at its defaults (every core, 10 trials, three
    # consumer rates) the slowest rate alone, 460 images/s (a V100 in fp32), keeps the GPU busy
    # about 96 s. Here: 8 workers of 32 images, 2 trials, the rates of an H100/H200-class GPU
    # (1840 and 5800 images/s); each gated case makes at least 8 iterations of 256 images, so
    # the two rates take about 2 x 3 x (1.1 + 0.35) s.
    quick_pipe=${FB_CHECK_PIPELINE_OPTS-"--threads 8 --batch 32 --rate 1840,5800 --trials 2 --warmup 1"}
    # the collectives to 64 MiB: 5 benchmarks x 2 cases x 24 sizes within the step's 90 s
    coll_sizes="--max-bytes 64M"
fi

{
    echo "== $(date -u +%FT%TZ) $(hostname) backend $backend"
    if command -v nvidia-smi >/dev/null 2>&1; then
        lim=$(probe_limit 30)
        if [ "$lim" -gt 0 ]; then
            timeout -k 5 "$lim" nvidia-smi --format=csv \
                --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current ||
                echo "nvidia-smi: exit $? (124: no answer within ${lim}s)"
        else
            echo "nvidia-smi: not run: the ${budget_s}s budget is spent"
        fi
    fi
    echo "NCCL: ${FB_NCCL_LIBRARY:-not found (set FB_NCCL_LIBRARY)}"
} >"$out/host.txt" 2>&1
must versions 30 "$bin" --version
must doctor 60 $launch "$bin" doctor --backend "$backend" --json "$out/doctor.json"
# NCCL's INFO log lands in the run folder by itself (nccl-rank<N>.log).
must run 150 $launch "$bin" run h2d allreduce densenet_allreduce --backend "$backend" $coll $quick \
    --out "$out/run" --force --quiet $dry
keep run
cp "$out/run/env.json" "$out"/run/nccl-rank*.log "$out/" 2>/dev/null
if have_mpirun; then
    must p2p 60 "$mpirun" -np 2 --oversubscribe "$bin" run p2p --backend "$backend" --coll mpi \
        --allow-oversubscribe $quick --out "$out/p2p" --force --quiet $dry
    keep p2p
else
    printf 'p2p\t-\t0\tnot run: two processes need mpirun\n' >>"$out/steps.tsv"
    failed=1
fi
# Issue 18's pieces on one GPU (NCCL on cuda): the other collectives, each verified; one training
# step's communication replayed from the DenseNet-121 mix; a soak of the default point, with
# NVML's counters read each interval and its verdict (0 healthy).
must collectives 90 $launch "$bin" run all_gather reduce_scatter alltoall broadcast reduce \
    --backend "$backend" $coll $coll_sizes --out "$out/coll" --force --quiet $dry
keep coll
must replay 45 $launch "$bin" run replay --mix "$mixes/densenet121-horovod.mix" \
    --backend "$backend" $coll $quick --out "$out/replay" --force --quiet $dry
keep replay
must soak $((soak_s + 25)) $launch "$bin" soak --duration "$soak_s" --interval $((soak_s / 4)) \
    --tolerance "$soak_tolerance" --backend "$backend" $coll --out "$out/soak" --force --quiet
cp "$out/soak/soak.csv" "$out/soak/health.csv" "$out/" 2>/dev/null
# The conv, BatchNorm and pool kernels, and the GPU engine, against their CPU references.
gpu_test test_conv_gemm "$tests/gpu/test_conv_gemm" 30
gpu_test test_pool_kernels "$tests/gpu/test_pool_kernels" 30
gpu_test test_conv_engine_cuda "$tests/test_conv_engine_cuda" 45
# The training step's pieces: the input pipeline once, in a step of its own, then the compute.
must pipeline 60 $unbound "$bin" run pipeline --backend "$backend" --resolution $res $quick_pipe \
    --out "$out/pipeline" --force --quiet $dry
keep pipeline
must train-fp16 60 $unbound "$bin" run compute --backend "$backend" --precision fp16 \
    --resolution $res $quick_train --out "$out/train-fp16" --force --quiet $dry
keep train-fp16
must train-bf16 45 $unbound "$bin" run compute --backend "$backend" --precision bf16 \
    --resolution $res $quick_train --out "$out/train-bf16" --force --quiet $dry
keep train-bf16
# memfit's batch for the step's optimizer (SGD momentum), then confirmed: a whole training step
# at that batch runs and is measured.
must memfit 30 $unbound "$bin" run memfit --backend "$backend" --precision $fit_prec \
    --resolution $res --optimizer momentum $fit $devmem --out "$out/memfit" --force --quiet
keep memfit
fit_batch=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["bench"] == "memfit" && $c["metric"] == "batch_max" && $c["src"] == "" {
        print $c["median"] + 0; exit }' "$out/memfit-results.csv" 2>/dev/null)
if [ -n "$fit_batch" ] && [ "$fit_batch" -gt 0 ]; then
    must fit 45 $unbound "$bin" run step --backend "$backend" --precision $fit_prec \
        --batch "$fit_batch" --resolution $res --warmup 1 --trials 2 --iters 1 \
        --out "$out/fit" --force --quiet $dry
    keep fit
    [ -n "$dry" ] || grep -q '^[^,]*,step,step,.*,images_per_s,' "$out/fit-results.csv" 2>/dev/null ||
        { echo "gpu-check: the step at memfit's batch $fit_batch measured nothing" >&2; failed=1; }
else
    printf 'fit\t-\t0\tnot run: no memfit batch_max above 0\n' >>"$out/steps.tsv"
    failed=1
fi
# The peers: PyTorch's copies at h2d's sizes and its DenseNet-121 step at compute's batch.
if [ -n "$dry" ]; then
    for s in torch-copy torch-fp16 torch-bf16; do
        limit=60
        [ "$s" = torch-copy ] && limit=40
        plan_step "$s" "$limit" python3 || failed=1
    done
elif [ "$backend" = host ]; then
    echo "not measured: host backend" >"$out/torch-copy.txt"
else
    # whether torch imports: a probe within the budget; past its limit the torch steps are not
    # run and the check fails, as a step past the budget does (torch missing fails nothing)
    lim=$(probe_limit 60) rc=124
    if [ "$lim" -gt 0 ]; then
        timeout -k 5 "$lim" $host_python -c "import torch, torchvision" >/dev/null 2>&1
        rc=$?
    fi
    torch=yes
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        why="the ${budget_s}s budget is spent"
        [ "$lim" -gt 0 ] && why="importing torch took past ${lim}s"
        for s in torch-copy torch-fp16 torch-bf16; do
            printf '%s\t-\t0\tnot run: %s\n' "$s" "$why" >>"$out/steps.tsv"
        done
        failed=1 torch=no
    elif [ "$rc" != 0 ]; then
        echo "not measured: no python3 with torch and torchvision on this host" >"$out/torch-copy.txt"
        torch=no
    fi
fi
if [ -z "$dry" ] && [ "$backend" != host ] && [ "$torch" = yes ]; then
    sizes=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        $c["bench"] == "h2d" && $c["case"] == "pinned_h2d" && $c["ranks"] == 1 {
            print $c["bytes"] }' "$out/run-results.csv" 2>/dev/null | sort -nu | paste -sd, -)
    must torch-copy 40 $host_python "$scripts/torch_copy.py" \
        --bytes "${sizes:-67108864}"
    # The batch compute measured (its default: 32 on cuda).
    for prec in fp16 bf16; do
        batch=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            $c["bench"] == "compute" && $c["case"] == "step_ours" { print $c["batch"]; exit }' \
            "$out/train-$prec-results.csv" 2>/dev/null)
        must torch-$prec 60 $host_python "$scripts/torch_densenet_step.py" \
            --batch "${batch:-32}" --resolution 224 --precision $prec
    done
fi
if [ -n "$dry" ]; then
    cat "$out/steps.tsv"
    echo "gpu-check: dry run: the steps plan ${planned}s of the ${budget_s}s budget (fabricbench's steps: the floor of their plans; the others: their typical time)"
    [ "$planned" -le "$budget_s" ] || {
        echo "gpu-check: dry run: the plans (${planned}s) pass the ${budget_s}s budget" >&2
        failed=1
    }
    exit $failed
fi
sh "$scripts/gpu-summary.sh" "$out" "$backend" ||
    { echo "gpu-check: summary.md not written" >&2; failed=1; }
cat "$out/summary.md" 2>/dev/null
echo "gpu-check: $(($(date +%s) - t0))s of the ${budget_s}s budget; outcomes in $out/steps.tsv"
awk -F'\t' '$4 != "ok" { print "gpu-check: " $1 ": " $4 }' "$out/steps.tsv" >&2
exit $failed
