#!/bin/sh
# The simulated scale run of docs/scale.md: many ranks oversubscribed on one machine, pretend
# nodes of PER_NODE consecutive ranks (FB_TEST_RANKS_PER_NODE, test only), tiny messages and few
# trials, so what grows is the harness's own cost: run time and rank 0's peak memory (env.json's
# rank0_peak_rss_bytes) against ranks, for p2p with every pair and sampled, and allreduce.
# Usage: sh docs/scale/measure.sh BIN "2 4 8 16 32 64" REPEATS > docs/scale/scale.dat
bin=${1:-build/bench/fabricbench} nps=${2:-"2 4 8 16 32 64"} reps=${3:-1}
per_node=${PER_NODE:-4}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 FB_NVML_LIBRARY=none.so
export FB_TEST_RANKS_PER_NODE=$per_node
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
common="--backend host --trials 2 --warmup 1 --iters 2 --quiet --telemetry-ms 0"
echo "# bench mode ranks nodes rep wall_s rank0_peak_rss_bytes rows  (per node: $per_node; $(nproc) cores)"
for np in $nps; do
    for rep in $(seq 1 "$reps"); do
        for what in "p2p all" "p2p sampled" "allreduce -"; do
            set -- $what
            [ "$1 $2" = "p2p all" ] && [ "$np" -gt "${MAX_ALL:-32}" ] && continue
            case $1 in
            p2p) args="p2p --matrix $2 --sizes 4K --matrix-bytes 4K --latency-bytes 8" ;;
            *) args="allreduce --min-bytes 8 --max-bytes 64K --ranks $np" ;;
            esac
            rm -rf "$work/r"
            t0=$(date +%s.%N)
            mpirun --oversubscribe -np "$np" -x FB_TEST_RANKS_PER_NODE "$bin" run $args $common \
                --out "$work/r" >"$work/out" 2>&1 || { echo "# $what np $np failed" >&2; tail -3 "$work/out" >&2; continue; }
            t1=$(date +%s.%N)
            rss=$(sed -n 's/.*"rank0_peak_rss_bytes":[[:space:]]*\([0-9.e+]*\).*/\1/p' "$work/r/env.json")
            rows=$(($(wc -l <"$work/r/results.csv") - 1))
            echo "$1 $2 $np $(( (np + per_node - 1) / per_node )) $rep $(echo "$t1 - $t0" | bc) $rss $rows"
        done
    done
done
