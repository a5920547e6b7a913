#!/bin/sh
# The README's first command: installs what is missing, builds, checks the job with `doctor`,
# runs the default suite on this machine with the right launcher and binding, reports it
# (`fabricbench report`: plots and summary.md), and
# ends by saying where the results are. One rank per GPU when there are GPUs (bound to the
# socket nearest its GPU); two ranks on the host backend when there are none.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
sh "$top/harness/setup-debian.sh"
sh "$top/harness/build.sh"
bin=${FB_BUILD_DIR:-$top/build}/bench/fabricbench
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

gpus=0
command -v nvidia-smi >/dev/null 2>&1 && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
sockets=$(lscpu -p=SOCKET 2>/dev/null | grep -v '^#' | sort -u | wc -l)
[ "$sockets" -ge 1 ] || sockets=1
if [ "$gpus" -gt 0 ]; then
    # Local rank picks the GPU, so ranks must be laid out in GPU order: with GPUs spread evenly
    # over sockets (the usual numbering), N/sockets consecutive ranks per socket, bound to it.
    if [ $((gpus % sockets)) -eq 0 ]; then map="ppr:$((gpus / sockets)):socket"; else map=socket; fi
    launch="mpirun -np $gpus --map-by $map --bind-to socket"
else
    launch="mpirun -np 2 --oversubscribe --bind-to core"
fi
out="$top/results/$(date +%Y%m%d-%H%M%S)-$(hostname)"
echo "== doctor: $launch $bin doctor"
# shellcheck disable=SC2086
$launch "$bin" doctor || echo "(doctor found problems: see FAIL lines above; measuring anyway)"
echo "== run: $launch $bin run --out $out"
# shellcheck disable=SC2086
$launch "$bin" run --out "$out" "$@"
# plots (gnuplot, when on PATH) and summary.md in the run folder
"$bin" report "$out" || echo "(report failed: the results are complete in $out/results.csv)"
echo "results: $out"
