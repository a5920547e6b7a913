#!/bin/sh
# results/SCHEMA.md documents what a run writes, both ways (curl keeps its options documented
# the same way: a test fails when one is not): every file of a real run folder is in its files
# table and every file of that table is in the run; every column of results.csv is in the
# columns table and every column of the table in the header; every metric written is in the
# Metrics table with the unit written, every unit in the `unit` column's list, every transport
# named; and every metric of the Metrics table is written by the run.
# usage: schema.sh SCHEMA.md FABRICBENCH [FAKE_NVML] (the fake makes telemetry.csv and its rows)
. "$(dirname "$0")/lib.sh"
schema=$1 bin=$2 fake=${3:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Two ranks, so that every benchmark (p2p needs a pair) writes its rows and metrics; replay's
# mix is the parser test's, scaled down; --timing both adds the collectives' time_synced_* rows.
# One consumer rate for the pipeline, its fastest default on host: every rate writes the same
# columns and metrics, and the default's slowest (50 images/s) took 20 of the run's 45 s. One
# batch size (2) for the pipeline, compute and step: the same columns and metrics as the host
# default's 8 (and step's 1, 2, 4), in 15 s instead of 29 (25 CPU-s instead of 49).
FB_NVML_LIBRARY=$fake mpi 2 "$bin" run --out "$out/run" --quiet --sizes 64K --matrix-bytes 64K \
    --fusion off,4M --trials 2 --warmup 1 --memory-budget 128M --resolution 32 --rate 200 --batch 2 \
    --telemetry-ms 20 --mix "$(dirname "$0")/data/mix/good.mix" --scale 0.00001 --timing both \
    >/dev/null 2>&1 || fail "a short run failed"
csv=$out/run/results.csv
header=$(head -n 1 "$csv")
[ -n "$header" ] || fail "no header written"
# the tables of SCHEMA.md: rows of the table whose header row starts with "| $1 |"
table() {
    awk -v h="| $1 |" 'index($0, h) == 1 { on = 1; next } on && !/^\|/ { exit } on' "$schema"
}
table file >"$out/files"
table column >"$out/columns"
table metric >"$out/metrics"
[ -s "$out/files" ] && [ -s "$out/columns" ] && [ -s "$out/metrics" ] ||
    fail "SCHEMA.md lacks its files, columns or metrics table"

# files, both ways (nccl-rank<N>.log stands for each rank's NCCL log)
for f in $(ls -A "$out/run"); do
    name=$(echo "$f" | sed 's/^nccl-rank[0-9]*\.log$/nccl-rank<N>.log/')
    grep -qF "| \`$name\` |" "$out/files" ||
        fail "file '$f' of the run is not in SCHEMA.md's files table"
done
for f in $(sed -n 's/^| `\([^`]*\)` |.*/\1/p' "$out/files"); do
    case $f in *'<N>'*) continue ;; esac # only where NCCL runs
    if [ "$f" = telemetry.csv ] && [ -z "$fake" ]; then continue; fi
    [ -e "$out/run/$f" ] || fail "SCHEMA.md's files table names '$f', which the run did not write"
done

# columns, both ways
for col in $(echo "$header" | tr ',' ' '); do
    grep -q "^| \`$col\` |" "$out/columns" || fail "column '$col' is not documented in SCHEMA.md"
done
for col in $(sed -n 's/^| `\([^`]*\)` |.*/\1/p' "$out/columns"); do
    echo ",$header," | grep -q ",$col," ||
        fail "SCHEMA.md documents column '$col', which results.csv lacks"
done

# metrics with their units; units; transports
unit_row=$(grep '^| `unit` |' "$out/columns")
csv_awk '{ print v("metric") "\t" v("unit") }' "$csv" | sort -u >"$out/written"
while IFS='	' read -r metric unit; do
    row=$(grep "^| [^|]*\`$metric\`[^|]*|" "$out/metrics")
    if [ -z "$row" ]; then
        fail "metric '$metric' is not documented in SCHEMA.md"
        continue
    fi
    documented=$(echo "$row" | awk -F'|' '{ gsub(/^ +| +$/, "", $3); print $3 }')
    [ "$documented" = "$unit" ] ||
        fail "metric '$metric' is written in '$unit', SCHEMA.md says '$documented'"
    echo "$unit_row" | grep -qF "\`$unit\`" || fail "unit '$unit' is not in SCHEMA.md's unit column"
done <"$out/written"
for t in $(csv_awk '{ print v("transport") }' "$csv" | sort -u); do
    grep -qF "\`$t\`" "$schema" || fail "transport '$t' is not named in SCHEMA.md"
done
for metric in $(sed -n 's/^| \(`[^|]*\) |.*/\1/p' "$out/metrics" | tr -d '`,'); do
    if [ -z "$fake" ]; then
        case $metric in
        *_pct | *_bytes | power_w | *_mhz | temp_c | throttle_reasons) continue ;; # telemetry
        esac
    fi
    cut -f1 "$out/written" | grep -qx "$metric" ||
        fail "SCHEMA.md documents metric '$metric', which the run did not write"
done
finish
