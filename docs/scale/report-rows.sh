#!/bin/sh
# How `report` scales with the rows of results.csv (docs/scale.md, "report and rows"): a run
# folder of N synthetic rows shaped like a large run's (p2p matrix cells, h2d per rank and all
# ranks, all-reduce sweeps, telemetry per rank, step images/s with their bandwidth rows,
# densenet_allreduce times), then `report --no-plots` timed on it (the best of 3, seconds).
#   docs/scale/report-rows.sh BIN [ROWS...]        default ROWS: 10000 100000 1000000
#   docs/scale/report-rows.sh --generate DIR ROWS  only write DIR/results.csv and DIR/env.json
# tests/unit/test_report_scale.c uses --generate.
set -e

# generate DIR ROWS
generate() {
    mkdir -p "$1"
    printf '{\n\t"run_status":\t"complete",\n\t"nranks":\t4096\n}\n' >"$1/env.json"
    awk -v n="$2" 'BEGIN {
        print "run_id,bench,case,backend,transport,link,nodes,ranks,src,dst,batch,bytes,count," \
              "dtype,redop,iters,metric,unit,samples,median,p05,p95,min,max,mean,stddev,wrong"
        R = 4096
        split("gpu_util_pct mem_util_pct mem_used_bytes power_w sm_clock_mhz mem_clock_mhz " \
              "temp_c throttle_reasons", tm, " ")
        split("h2d p2p allreduce step", tb, " ")
        for (i = 0; i < n; i++) {
            k = i % 8; j = int(i / 8); v = 1 + (i % 97) / 10
            src = ""; dst = ""; batch = ""; bytes = ""; dtype = ""; unit = "GB/s"
            if (k == 0) {        # p2p matrix cells
                b = "p2p"; c = "matrix_uni"; m = "bandwidth"; ranks = R; src = j % R
                dst = (src + 1 + int(j / R)) % R; bytes = 67108864
            } else if (k == 1) { # h2d, each rank alone
                b = "h2d"; c = "pinned_h2d"; m = "bandwidth"; ranks = R; src = j % R
                bytes = 2 ^ (10 + int(j / R) % 20)
            } else if (k == 2) { # h2d, all ranks: a scaling curve
                b = "h2d"; c = "pinned_h2d"; m = "bandwidth"; ranks = 2 ^ (j % 13)
                bytes = 2 ^ (10 + int(j / 13) % 20)
            } else if (k == 3) { # all-reduce sweeps
                b = "allreduce"; c = "out_of_place"; m = "busbw"; ranks = 2 ^ (j % 13)
                bytes = 2 ^ (2 + int(j / 13) % 28); dtype = "float"
            } else if (k == 4) { # telemetry per benchmark and rank
                b = tb[1 + j % 4]; c = "telemetry"; m = tm[1 + int(j / 4) % 8]; unit = "-"
                src = int(j / 32) % R
            } else if (k == 5 || k == 6) { # step: images/s and the copy bandwidth of a point
                b = "step"; c = "step"; m = k == 5 ? "images_per_s" : "bandwidth"
                unit = k == 5 ? "images/s" : "GB/s"; ranks = 2 ^ (j % 13)
                batch = 2 ^ (int(j / 13) % 9); bytes = batch * 602112
            } else {             # densenet_allreduce times
                b = "densenet_allreduce"; c = j % 2 ? "per_tensor" : "flat"; m = "time"
                unit = "us"; ranks = 2 ^ (j % 13); dtype = int(j / 13) % 2 ? "half" : "float"
            }
            if (k == 4 || k == 1 || k == 0) ranks = R
            printf "scale,%s,%s,host,memcpy,,512,%d,%s,%s,%s,%s,,%s,,10,%s,%s,5,%g,%g,%g,%g,%g,%g,0.1,0\n",
                b, c, ranks, src, dst, batch, bytes, dtype, m, unit, v, v * 0.9, v * 1.1,
                v * 0.8, v * 1.2, v
        }
    }' >"$1/results.csv"
}

if [ "$1" = --generate ]; then
    generate "$2" "$3"
    exit 0
fi
bin=${1:?usage: report-rows.sh BIN [ROWS...]}
shift
[ $# -gt 0 ] || set -- 10000 100000 1000000
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "rows  results.csv_MB  report_s(best of 3)"
for rows in "$@"; do
    generate "$work/r$rows" "$rows"
    best=
    for try in 1 2 3; do
        t0=$(date +%s.%N)
        "$bin" report --no-plots "$work/r$rows" >/dev/null
        t1=$(date +%s.%N)
        best=$(echo "$t0 $t1 $best" | awk '{ d = $2 - $1; if ($3 == "" || d < $3) print d; else print $3 }')
    done
    mb=$(du -m "$work/r$rows/results.csv" | cut -f1)
    printf '%s  %s  %.3f\n' "$rows" "$mb" "$best"
    rm -rf "$work/r$rows"
done
