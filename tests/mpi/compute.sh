#!/bin/sh
# compute on host under mpirun -np 2, small and short: every planned case measured and verified
# (wrong = 0: each conv pass against a direct convolution in double, the step's output finite),
# images/s and TFLOP/s positive, tflops = 2 x MACs / time with the MACs of the layer shapes, the
# summary's efficiency rows, and one grad_ready row per weight tensor, non-decreasing.
. "$(dirname "$0")/../lib.sh"
bin=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run="$work/run"

mpi 2 "$bin" run compute --backend host --out "$run" --trials 3 --warmup 1 --trial-ms 1 \
    --resolution 32 --batch 2 --quiet >"$work/stdout" 2>"$work/stderr"
rc=$?
[ "$rc" = 0 ] || { cat "$work/stderr" >&2; fail "run exited $rc"; finish; }
csv="$run/results.csv"
[ -f "$csv" ] || { fail "no results.csv"; finish; }

csv_awk '
v("bench") == "compute" {
    c = v("case"); m = v("metric"); med = v("median") + 0; where = "row " NR " (" c " " m " src " v("src") ")"
    if (v("batch") != 2) bad(where, "batch " v("batch"))
    if (m != "efficiency" && m != "grad_ready") {
        if (v("wrong") != "0") bad(where, "wrong = " v("wrong"))
        if (med <= 0) bad(where, "median " med)
        alone = v("src") == "0" && v("ranks") == 1
        if (m == "time" && alone) cases[c]++
        if (m == "time" && v("src") == "" && v("ranks") == 2) together[c]++
        if (m == "time" && alone) t[c] = med
        if (m == "tflops" && alone) tf[c] = med
        if (m == "images_per_s" && alone) ips[c] = med
    }
    if (m == "efficiency") { eff[c]++; if (!(med > 0 && med < 1000)) bad(where, "efficiency " med) }
    if (m == "grad_ready") {
        ready++
        if (v("src") != "0") bad(where, "grad_ready measured on rank 0 has src '\''" v("src") "'\''")
        if (med < last) bad(where, "grad_ready " med " before the previous " last)
        last = med
        if (NR > 1 && ready == 1 && c != "classifier") bad(where, "the first gradient ready is " c)
    }
}
function bad(where, what) { print "FAIL: " where ": " what > "/dev/stderr"; errors++ }
END {
    split("stem block1 block2 block3 block4 transition1 transition2 transition3 head", g, " ")
    n = split("step_ours step_ref step_convs", want, " ")
    for (i = 1; i <= 9; i++) {
        want[++n] = "fwd_" g[i]; want[++n] = "bwd_" g[i]; want[++n] = "fwd_" g[i] "_ref"; want[++n] = "bwd_" g[i] "_ref"
        if (eff[g[i]] != 1 || eff["fwd_" g[i]] != 1 || eff["bwd_" g[i]] != 1) bad(g[i], "efficiency rows missing")
    }
    for (i = 1; i <= n; i++) if (cases[want[i]] != 1) bad(want[i], cases[want[i]] " rank-0 points, expected 1")
    if (together["step_ours"] != 1 || together["step_ref"] != 1) bad("all ranks", "step_ours/step_ref missing")
    if (eff["step"] != 1 || eff["step_convs"] != 1) bad("step", "efficiency rows missing")
    if (!(ips["step_ours"] > 0)) bad("step_ours", "no images_per_s")
    # images_per_s = batch / time, and ours and the ceiling count the same FLOPs (same GEMMs);
    # the FLOP count itself is checked against 2.834 G MACs per 224 image in test_densenet_step
    if (t["step_ours"] > 0 && (ips["step_ours"] * t["step_ours"] / 1e6 < 1.999 || ips["step_ours"] * t["step_ours"] / 1e6 > 2.001)) bad("step_ours", "images_per_s * time != 2 images")
    fo = tf["step_ours"] * t["step_ours"]; fr = tf["step_ref"] * t["step_ref"]
    if (fo <= 0 || fr / fo > 1.001 || fr / fo < 0.999) bad("step", "ours and ref count different FLOPs: " fo " vs " fr)
    if (ready != 121) bad("grad_ready", ready " rows, expected 121 (120 convolutions and the classifier)")
    exit errors ? 1 : 0
}' "$csv" || fail "CSV content checks failed"

grep -q "efficiency" "$work/stdout" || grep -q "eff%" "$work/stdout" || fail "no summary table printed"
finish
