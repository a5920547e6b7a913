#!/bin/sh
# step on host under mpirun -np 2, small (64x64, batch 2, JPEG images, 4M buckets so compute
# dominates the exchange): every point on 1 and 2 ranks, with and without overlap, verified
# (wrong = 0: every gradient sum of the step against the pattern); the split adds up to the
# step (the phases' means plus other_us within 3% of the runner's time; other_us at most 5% of
# the step on host, where every phase runs on the host thread or is timed by it); exposed
# communication smaller with overlap than without; images/s per GPU and scaling efficiency
# consistent with images/s; the timeline valid with every span; float16 gradients verified.
. "$(dirname "$0")/../lib.sh"
bin=$1 check_timeline=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run="$work/run"

mpi 2 "$bin" run step --backend host --out "$run" --resolution 64 --batch 2 --fusion 4M \
    --overlap both --trials 5 --warmup 1 --iters 1 --dataset imagenet --threads 1 --quiet \
    >"$work/stdout" 2>"$work/stderr"
rc=$?
[ "$rc" = 0 ] || { cat "$work/stderr" >&2; fail "run exited $rc"; finish; }
csv="$run/results.csv"
[ -f "$csv" ] || { fail "no results.csv"; finish; }

csv_awk '
v("bench") == "step" {
    c = v("case"); m = v("metric"); k = v("ranks") + 0; key = c "/" k
    where = "row " NR " (" key " " m ")"
    if (v("wrong") != "0") bad(where, "wrong = " v("wrong"))
    if (v("batch") != 2 || v("bytes") != 4194304 || v("dtype") != "float32" || v("count") != 6968206)
        bad(where, "batch " v("batch") " bytes " v("bytes") " dtype " v("dtype") " count " v("count"))
    if (v("transport") != "mpi") bad(where, "transport " v("transport"))
    med[key, m] = v("median") + 0; mean[key, m] = v("mean") + 0; seen[key, m]++
    if (m == "scaling_efficiency" && v("samples") != 1) bad(where, "samples " v("samples"))
    if (m != "scaling_efficiency" && v("samples") != 5) bad(where, "samples " v("samples"))
}
function bad(where, what) { print "FAIL: " where ": " what > "/dev/stderr"; errors++ }
function near(a, b, tol) { return a - b <= tol && b - a <= tol }
END {
    n = split("time images_per_s images_per_s_per_gpu data_wait_us h2d_us compute_us comm_exposed_us update_us other_us gpu_busy_fraction stall_fraction", want, " ")
    split("step step_no_overlap", cases, " ")
    for (ci = 1; ci <= 2; ci++) for (k = 1; k <= 2; k++) {
        key = cases[ci] "/" k
        for (i = 1; i <= n; i++) if (seen[key, want[i]] != 1) bad(key, seen[key, want[i]] + 0 " " want[i] " rows, expected 1")
        t = mean[key, "time"]
        sum = mean[key, "data_wait_us"] + mean[key, "h2d_us"] + mean[key, "compute_us"] + mean[key, "comm_exposed_us"] + mean[key, "update_us"] + mean[key, "other_us"]
        if (!(t > 0) || !near(sum, t, 0.03 * t)) bad(key, "the split adds up to " sum " us, the step took " t " us")
        if (!(med[key, "other_us"] <= 0.05 * med[key, "time"])) bad(key, "other_us " med[key, "other_us"] " is more than 5% of the step " med[key, "time"])
        if (!(med[key, "compute_us"] > 0 && med[key, "update_us"] > 0)) bad(key, "no compute or update time")
        ips = med[key, "images_per_s"]
        if (!near(ips * med[key, "time"] / 1e6, 2 * k, 0.002 * k)) bad(key, "images_per_s x time is not " 2 * k " images")
        if (!near(med[key, "images_per_s_per_gpu"], ips / k, 1e-6 * ips)) bad(key, "images_per_s_per_gpu is not images_per_s / " k)
        b = med[key, "gpu_busy_fraction"]; s = med[key, "stall_fraction"]
        if (!(b > 0 && b <= 1.0001 && s >= 0 && s < 1)) bad(key, "busy " b ", stall " s)
        if (k == 2) {
            e = ips / 2 / med[cases[ci] "/1", "images_per_s"]
            if (seen[key, "scaling_efficiency"] != 1 || !near(med[key, "scaling_efficiency"], e, 1e-6 * e)) bad(key, "scaling_efficiency " med[key, "scaling_efficiency"] ", expected " e)
        } else if (seen[key, "scaling_efficiency"]) bad(key, "a scaling_efficiency row on 1 rank")
    }
    on = med["step/2", "comm_exposed_us"]; off = med["step_no_overlap/2", "comm_exposed_us"]
    if (!(on < off)) bad("2 ranks", "exposed communication with overlap " on " us is not below " off " us without")
    else printf "exposed communication on 2 ranks: %.0f us with overlap, %.0f us without\n", on, off
    exit errors ? 1 : 0
}' "$csv" || fail "CSV content checks failed"

# the timeline: the first point on both ranks (1 warm-up step, then 5 recorded)
"$check_timeline" "$run/timeline.json" 2 5 4194304 4 || fail "timeline.json checks failed"
grep -q "exposed" "$work/stdout" || fail "no summary table printed"
# the overlap needs a communication thread: --mpi-thread auto asks for serialized when step runs
grep -Eq '"thread_level":[[:space:]]*"serialized"' "$run/env.json" ||
    fail "step ran at MPI thread level $(grep thread_level "$run/env.json"), not serialized"
grep -q "^  mpi: MPI ran at thread level serialized" "$work/stdout" ||
    fail "the headline does not say its MPI figures carry the serialized level's lock"

# float16 gradients on the wire: the sums are checked in float16
mpi 2 "$bin" run step --backend host --out "$work/fp16" --resolution 32 --batch 1 --fusion 25M \
    --fp16-allreduce --ranks 2 --trials 2 --warmup 0 --iters 1 --dataset imagenet --threads 1 \
    --quiet >"$work/stdout16" 2>"$work/stderr16" || { cat "$work/stderr16" >&2; fail "fp16 run failed"; }
csv_awk 'v("bench") == "step" && v("metric") == "time" { rows++; if (v("dtype") != "float16" || v("wrong") != "0") bad = 1 }
END { exit (rows == 1 && !bad) ? 0 : 1 }' "$work/fp16/results.csv" || fail "fp16: expected one verified float16 point"
finish
