#!/bin/sh
# pipeline under mpirun -np 2 on the host backend, once per data set (chestxray with uint8 on
# the wire, imagenet with floats from pageable memory): every planned case for rank 0 alone and
# for all ranks, images/s where images are counted, the bytes of a batch, verified batches
# (wrong = 0), stall fractions in [0, 1], and the summary's ratio rows present and plausible;
# a consumer slower than the workers never waits.
#   pipeline.sh FABRICBENCH [content|prefetch]   (default both)
# CTest runs the two parts as two tests: `content` (the two data sets' rows, no figure judged
# closer than 5x) beside other tests, `prefetch` (a stall fraction judged against 0.06) with
# at most 4 eighths of a CPU beside it (tests/CMakeLists.txt).
. "$(dirname "$0")/../lib.sh"
bin=$1 part=${2:-all}
case $part in all | content | prefetch) ;; *) echo "pipeline.sh: part is content or prefetch, not '$part'" >&2; exit 2 ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check_run() { # name dataset bytes_per_batch extra options...
    name=$1 dataset=$2 wire=$3; shift 3
    run="$work/$name"
    mpi 2 "$bin" run pipeline --backend host --out "$run" --dataset "$dataset" --threads 2 \
        --batch 2 --rate 100,1000 --trials 3 --warmup 1 --trial-ms 1 --quiet "$@" \
        >"$work/$name.stdout" 2>"$work/$name.stderr"
    rc=$?
    [ "$rc" = 0 ] || { cat "$work/$name.stderr" >&2; fail "$name: run exited $rc"; return; }
    csv="$run/results.csv"
    [ -f "$csv" ] || { fail "$name: no results.csv"; return; }
    csv_awk '
    v("bench") == "pipeline" {
        c = v("case"); m = v("metric"); med = v("median") + 0; k = v("ranks"); s = v("src")
        where = "row " NR " (" c " ranks " k " src " s " " m ")"
        if (m != "cpu_vs_decode" && m != "copy_vs_h2d" && m != "pipeline_vs_h2d" && v("wrong") != "0") bad(where, "wrong = " v("wrong"))
        if (m == "time") {
            seen[c "," k "," s]++
            if (med <= 0) bad(where, "time " med)
            if (c == "decode" && v("batch") != "") bad(where, "decode has batch " v("batch"))
            if (c != "decode" && v("batch") != 2) bad(where, "batch " v("batch"))
            # a batch: 2 images of 3 x 224 x 224 values; with workers an iteration is a batch per worker (2)
            if ((c == "h2d_raw" || c == "copy") && v("bytes") != wire) bad(where, "bytes " v("bytes") " expected " wire)
            if ((c == "pipeline" || c ~ /^consume_/) && v("bytes") != 2 * wire) bad(where, "bytes " v("bytes") " expected " 2 * wire)
        }
        if (m == "images_per_s") { ips[c "," k "," s] = med; if (!(med > 0)) bad(where, "images/s " med) }
        if (m == "stall_fraction") { stall[c "," k "," s]++; if (!(med >= 0 && med <= 1 && v("min") >= 0 && v("max") <= 1)) bad(where, "stall " med) }
        if ((m == "bandwidth" || m == "bandwidth_total") && !(med > 0)) bad(where, m " " med)
        # ratios of medians on a shared 2-core machine: loose bounds, a unit slip is 1000x
        if (m == "cpu_vs_decode") { r_cpu[c "," k "," s]++; if (!(med > 5 && med < 400)) bad(where, "cpu_vs_decode " med "%") }
        if (m == "copy_vs_h2d") { r_copy[k "," s]++; if (!(med > 5 && med < 1000)) bad(where, "copy_vs_h2d " med "%") }
        if (m == "pipeline_vs_h2d") { r_pipe[k "," s]++; if (!(med > 0 && med < 1000)) bad(where, "pipeline_vs_h2d " med "%") }
    }
    function bad(where, what) { print "FAIL: " where ": " what > "/dev/stderr"; errors++ }
    END {
        split("decode cpu_t1 cpu_t2 h2d_raw copy pipeline consume_100 consume_1000", cases, " ")
        split("1,0 2,", who, " ")
        for (i = 1; i <= 8; i++) for (j = 1; j <= 2; j++) {
            key = cases[i] "," who[j]
            if (seen[key] != 1) bad(key, seen[key] " time rows, expected 1")
            if (cases[i] != "h2d_raw" && cases[i] != "copy" && !(key in ips)) bad(key, "no images_per_s row")
            if (cases[i] ~ /^consume_/ && stall[key] != 1) bad(key, "no stall_fraction row")
            if (cases[i] ~ /^cpu_t/ && r_cpu[key] != 1) bad(key, "no cpu_vs_decode row")
        }
        for (j = 1; j <= 2; j++) {
            if (r_copy[who[j]] != 1) bad(who[j], "no copy_vs_h2d row")
            if (r_pipe[who[j]] != 1) bad(who[j], "no pipeline_vs_h2d row")
        }
        # all ranks at once: one images_per_s row per rank besides the total
        exit errors ? 1 : 0
    }' wire="$wire" "$csv" || fail "$name: CSV content checks failed"
    per_rank=$(csv_awk 'v("case") == "pipeline" && v("metric") == "images_per_s" && v("src") != "" && v("ranks") == 2 { n++ } END { print n + 0 }' "$csv")
    [ "$per_rank" = 2 ] || fail "$name: $per_rank per-rank pipeline rows, expected 2"
    grep -q "images/s per thread vs decode" "$work/$name.stdout" || fail "$name: no summary table"
}

if [ "$part" != prefetch ]; then
    check_run png chestxray 301056
    check_run jpeg imagenet 1204224 --wire float --host-memory pageable
fi
[ "$part" != content ] || finish

# Prefetch: a consumer far slower than the workers must find every batch ready. One worker
# builds a batch of 2 PNGs in a fraction of the 100 ms a consumer at 20 images/s computes on
# each. With the ring's slot held through the compute (the bug this catches) the worker could
# not start the next batch until the compute ended, and the consumer would wait for each build.
"$bin" run pipeline --backend host --out "$work/slow" --threads 1 --batch 2 --rate 20 \
    --trials 3 --warmup 1 --trial-ms 1 --quiet >"$work/slow.txt" 2>&1 || fail "slow consumer run failed"
stall=$(csv_awk 'v("case") == "consume_20" && v("metric") == "stall_fraction" && v("src") == 0 { print v("median") }' "$work/slow/results.csv")
awk -v s="$stall" 'BEGIN { exit !(s != "" && s < 0.06) }' ||
    fail "a consumer at 20 images/s stalls $stall of its time behind a worker making ~100 images/s"
finish
