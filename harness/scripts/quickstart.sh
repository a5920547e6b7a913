#!/bin/sh
# The README's first command: installs what is missing, builds, then one `fabricbench sweep` on
# this machine - doctor, the run, the report - and ends with the headline table and the run
# folder. With GPUs: one rank per GPU, each bound to its GPU's socket (the sweep's defaults).
# Without: two ranks on the host backend, oversubscribed if the machine has fewer cores.
#
#   sh harness/scripts/quickstart.sh                    # the default quick run
#   sh harness/scripts/quickstart.sh allreduce --max-bytes 64M   # these `run` arguments instead
#   FB_SWEEP_ARGS="--binding both --vary NCCL_P2P_DISABLE=0,1" sh harness/scripts/quickstart.sh
#
# Arguments replace the quick run's `run` arguments (FB_QUICK_GPU / FB_QUICK_HOST below);
# FB_SWEEP_ARGS adds `sweep` options (docs/sweep.md). Exit status: the sweep's.
set -eu
top=$(CDPATH='' cd -- "$(dirname -- "$0")/../.." && pwd)
sh "$top/harness/scripts/setup-debian.sh"
sh "$top/harness/scripts/build.sh"
bin=${FB_BUILD_DIR:-$top/build}/bench/fabricbench

# What the quick run measures. GPUs: the whole default suite. Host: cut down to a few sizes on
# two ranks (the run prints its estimate of the time left as it goes): sizes up to 4 MiB and, for h2d, one past the
# last-level cache (--beyond-llc: 4 MiB fits in it, a cache figure), 5 trials, three fusion
# thresholds (1M, 4M, 25M: DenseNet-121's gradients in fewer buckets at each, 2 at 25M, for
# the exchange against the threshold and for `step`'s overlap), and `step` on GPU counts 1, 2
# at batches 2, 4.
: "${FB_QUICK_GPU:=}"
: "${FB_QUICK_HOST:=h2d p2p allreduce densenet_allreduce step --backend host --max-bytes 4M --beyond-llc --matrix-bytes 4M --fusion 1M,4M,25M --batch 2,4 --trials 5}"
: "${FB_SWEEP_ARGS:=}"

gpus=0
command -v nvidia-smi >/dev/null 2>&1 && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$gpus" -gt 0 ]; then
    # --np and the binding are the sweep's defaults: one rank per GPU of this node, with
    # `--map-by ppr:K:socket --bind-to socket` so local rank i lands on GPU i's socket
    launch=""
    quick=$FB_QUICK_GPU
else
    # the CPU is the device: one core per rank (bound to a whole socket, each rank's BLAS would
    # run a thread per core and the two ranks would fight over the cores)
    launch="--np 2 --binding core --mpirun-arg --oversubscribe"
    quick=$FB_QUICK_HOST
fi
out="$top/results/$(date +%Y%m%d-%H%M%S)-$(hostname)"
rc=0
if [ "$#" -gt 0 ]; then
    # shellcheck disable=SC2086
    "$bin" sweep $launch $FB_SWEEP_ARGS --out "$out" -- "$@" || rc=$?
else
    # shellcheck disable=SC2086
    "$bin" sweep $launch $FB_SWEEP_ARGS --out "$out" -- $quick || rc=$?
fi

# The headline of each launch's run (the run's own table, kept in its fabricbench.log), then
# where everything is.
headline() { awk '/^headline/ { p = 1 } p && /^$/ { exit } p' "$1/fabricbench.log"; }
echo
if [ -f "$out/launches.csv" ]; then
    for log in "$out"/*/fabricbench.log; do
        [ -f "$log" ] || continue
        echo "== $(basename "$(dirname "$log")")"
        headline "$(dirname "$log")"
    done
elif [ -f "$out/fabricbench.log" ]; then
    headline "$out"
fi
[ ! -f "$out/summary.md" ] || echo "report: $out/summary.md"
echo "results: $out"
exit "$rc"
