#!/bin/sh
# The GPU check's table of truth: reads what gpu-check.sh left in OUT (steps.tsv, the runs'
# results.csv copies, PyTorch's outputs) and writes OUT/summary.md, each fabricbench figure beside
# its peer measured in the same run on the same GPU, and their ratio. A peer that is absent reads
# "not measured: <why>", never as passing. POSIX sh and awk: a bare GPU host has no more.
# Usage: sh gpu-summary.sh OUT BACKEND
set -u
[ $# = 2 ] || { echo "usage: sh gpu-summary.sh OUT BACKEND" >&2; exit 2; }
out=$1 backend=$2
[ -d "$out" ] || { echo "gpu-summary: '$out' is not a folder" >&2; exit 2; }
# absolute, so that awk reads no file operand named like "node=gpu01/..." as an assignment
case $out in /*) ;; *) out=$PWD/$out ;; esac
set --
for f in steps.tsv run-results.csv torch-copy.txt train-fp16-results.csv \
    train-bf16-results.csv torch-fp16.txt torch-bf16.txt memfit-results.csv fit-results.csv; do
    [ -f "$out/$f" ] && set -- "$@" "tag=$f" "$out/$f"
done
[ $# -gt 0 ] || { echo "gpu-summary: nothing to summarize in '$out'" >&2; exit 2; }
# The collectives that ran: env.json's nccl object (copied from the run step), its version and
# the library loaded; "none" when the run loaded none (the host backend), "unknown" when absent.
nccl="unknown (no env.json)"
if [ -f "$out/env.json" ]; then
    nccl=$(tr -d '\n' <"$out/env.json" | sed -n 's/.*"nccl":[[:space:]]*{[^}]*"version":[[:space:]]*"\([^"]*\)"[^}]*"library":[[:space:]]*"\([^"]*\)".*/\1 from \2/p')
    [ -n "$nccl" ] || nccl=none
fi
awk -F, -v backend="$backend" -v nccl="$nccl" '
function hsize(b) {
    if (b >= 1048576 && b % 1048576 == 0) return (b / 1048576) " MiB"
    if (b >= 1024 && b % 1024 == 0) return (b / 1024) " KiB"
    return b " B"
}
function num(x) { return x != "" && x ~ /^[-+0-9.eE]+$/ }
function ratio(a, b) { return (num(a) && num(b) && b + 0 > 0) ? sprintf("%.2f", a / b) : "-" }
function v(name) { return (name in col) ? $(col[name]) : "" }
function row(what, ours, peer, r) { print "| " what " | " ours " | " peer " | " r " |" }
# Why a GPU figure or peer is absent: the host backend, or the step that should have made it.
function why(stepname, fallback) {
    if (backend == "host") return "not measured: host backend"
    if (stepname in st_note && st_note[stepname] != "ok")
        return "not measured: " stepname " " st_note[stepname]
    return "not measured: " fallback
}
# The figure or its absence: fmt applied to x, else why(stepname, fallback).
function fig(x, fmt, label, stepname, fallback) {
    return x != "" ? sprintf(fmt, x, label) : why(stepname, fallback)
}
FNR == 1 && tag ~ /\.csv$/ { split("", col)
    for (i = 1; i <= NF; i++) col[$i] = i
    next }
tag == "steps.tsv" {
    n = split($0, f, "\t"); if (n < 4) next
    st_rc[f[1]] = f[2]; st_note[f[1]] = f[4]; st_order[++nsteps] = f[1]; st_s[f[1]] = f[3]
    next }
tag == "run-results.csv" {
    c = v("case")
    if (v("bench") == "allreduce" && v("transport") != "") ran = v("transport")
    if (v("bench") == "h2d" && v("metric") == "bandwidth" && v("ranks") + 0 == 1 &&
        v("src") == "0" && (c == "pinned_h2d" || c == "pinned_d2h")) {
        fb_bw[c, v("bytes")] = v("median"); sizes[v("bytes")] = 1
    }
    next }
tag == "torch-copy.txt" {
    if ($0 ~ /^not measured:/) copy_why = $0
    n = split($0, w, " ")
    if (n == 4 && w[3] == "bandwidth_gbps") peer_bw[w[1], w[2]] = w[4]
    next }
tag ~ /^train-(fp16|bf16)-results\.csv$/ {
    p = substr(tag, 7, 4); c = v("case")
    if (v("bench") == "compute" && v("src") == "0" && v("ranks") + 0 == 1) {
        if (v("metric") == "tflops") { tf[p, c] = v("median"); tr[p, c] = v("transport") }
        if (v("metric") == "images_per_s" && c == "step_ours") ips[p] = v("median")
        if (c == "step_ours") batch[p] = v("batch")
    }
    next }
tag == "memfit-results.csv" {
    if (v("bench") == "memfit" && v("metric") == "batch_max" && v("src") == "") {
        fit_batch = v("median") + 0; fit_case = v("case")
    }
    next }
tag ~ /^torch-(fp16|bf16)\.txt$/ {
    p = substr(tag, 7, 4)
    if ($0 ~ /^not measured:/) torch_why[p] = $0
    if (match($0, /images_per_s [0-9.]+/))
        torch_ips[p] = substr($0, RSTART + 13, RLENGTH - 13)
    next }
tag == "fit-results.csv" {
    if (v("bench") == "step" && v("metric") == "images_per_s" && v("case") == "step")
        fit_ips = v("median")
    next }
# h2d: each size, sorted, and direction against PyTorch copies of the same size
function h2d_rows(    ns, list, s, i, j, x, d, c, b, ours, peer, ptxt) {
    ns = 0
    for (s in sizes) list[++ns] = s + 0
    for (i = 2; i <= ns; i++) {
        x = list[i]
        for (j = i - 1; j >= 1 && list[j] > x; j--) list[j + 1] = list[j]
        list[j + 1] = x
    }
    if (ns == 0)
        row("pinned H2D/D2H", why("run", "no h2d pinned rows in run-results.csv"), "-", "-")
    for (i = 1; i <= ns; i++) for (d = 1; d <= 2; d++) {
        c = d == 1 ? "pinned_h2d" : "pinned_d2h"; b = list[i]
        ours = ((c, b) in fb_bw) ? fb_bw[c, b] : ""; peer = ((c, b) in peer_bw) ? peer_bw[c, b] : ""
        if (peer != "") ptxt = sprintf("%.2f GB/s (torch copy_)", peer)
        else if (copy_why != "") ptxt = copy_why
        else ptxt = why("torch-copy", "no PyTorch copy at this size")
        row((d == 1 ? "pinned H2D " : "pinned D2H ") hsize(b),
            ours != "" ? sprintf("%.2f GB/s", ours) : "not measured: no " c " row at this size", ptxt,
            ratio(ours, peer))
    }
}
# the kernels self-checks: each test holds its own CPU reference
function self_check_rows(    tests, i, t, res, peer) {
    split("test_conv_gemm test_pool_kernels test_conv_engine_cuda", tests, " ")
    peer = backend == "host" ? "not measured: host backend" : "CPU reference, in the test"
    for (i = 1; i <= 3; i++) {
        t = tests[i]
        if (!(t in st_note)) res = "not run"
        else if (st_rc[t] == "0") res = "passed"
        else if (st_rc[t] == "77") res = "skipped: no GPU (exit 77)"
        else res = "FAILED: " st_note[t]
        row("self-check " t, res, peer, "-")
    }
}
# compute against cuBLAS on the same GEMM shapes; the step against PyTorch below
function compute_rows(p,    k, c, bt, run, ours, peer, otxt, ptxt, what) {
    run = "train-" p
    bt = (p in batch) ? ", batch " batch[p] : ""
    for (k = 1; k <= 2; k++) {
        c = k == 1 ? "step_convs" : "step_ours"
        ours = tf[p, c]; peer = tf[p, "step_ref"]
        otxt = fig(ours, "%.1f TFLOP/s (%s)", tr[p, c], run, "no compute " c " row in " run)
        ptxt = fig(peer, "%.1f TFLOP/s (%s, same shapes: step_ref)", tr[p, "step_ref"], run,
                   "no step_ref row in " run " (cuBLAS not loaded?)")
        what = "compute " p " " (k == 1 ? "GEMMs alone" : "whole step") " (" c bt ")"
        row(what, otxt, ptxt, ratio(ours, peer))
    }
}
function step_row(p,    bt, ours, peer, otxt, ptxt) {
    bt = (p in batch) ? " batch " batch[p] : ""
    ours = ips[p]; peer = torch_ips[p]
    otxt = fig(ours, "%.1f images/s (%s)", "compute step_ours", "train-" p,
               "no compute step_ours row in train-" p)
    if (peer != "") ptxt = sprintf("%.1f images/s (torch_densenet_step.py)", peer)
    else if (p in torch_why) ptxt = torch_why[p]
    else if (copy_why != "") ptxt = copy_why
    else ptxt = why("torch-" p, "no images_per_s in torch-" p ".txt")
    row("DenseNet-121 step " p bt, otxt, ptxt, ratio(ours, peer))
}
# memfit batch_max, confirmed by a whole step at that batch
function memfit_row(    otxt, ptxt, note) {
    note = ("fit" in st_note) ? st_note["fit"] : ""
    if (fit_batch > 0) {
        otxt = "batch_max " fit_batch " (" fit_case ")"
        if (note == "ok" && fit_ips != "")
            ptxt = sprintf("a step at batch %d fits: %.1f images/s", fit_batch, fit_ips)
        else if (note != "")
            ptxt = "NOT confirmed: the step at batch " fit_batch " " \
                   (note == "ok" ? "measured nothing" : note)
        else ptxt = "NOT confirmed: no step was run at that batch"
    } else {
        if (("memfit" in st_note) && st_note["memfit"] != "ok")
            otxt = "not measured: memfit " st_note["memfit"]
        else otxt = "not measured: no memfit batch_max above 0"
        ptxt = "NOT confirmed: no batch to run"
    }
    row("memfit batch", otxt, ptxt, "-")
}
END {
    print "# GPU check: the table of truth"
    print ""
    print "Backend `" backend "`. Each fabricbench figure beside its peer, measured in the " \
          "same run on"
    print "the same GPU; ratio = fabricbench / peer. A missing figure says why; it never passes."
    print ""
    print "Collectives (the run step): " \
          (ran != "" ? "the all-reduce ran on " ran : "no all-reduce measured") \
          "; NCCL loaded: " nccl "."
    print ""
    print "| figure | fabricbench | peer (same run, same GPU) | ratio |"
    print "|---|---|---|---|"
    h2d_rows()
    self_check_rows()
    compute_rows("fp16"); compute_rows("bf16")
    step_row("fp16"); step_row("bf16")
    memfit_row()
    print ""
    print "## Steps"
    print ""
    print "| step | exit | seconds | outcome |"
    print "|---|---|---|---|"
    for (i = 1; i <= nsteps; i++) {
        s = st_order[i]
        print "| " s " | " st_rc[s] " | " st_s[s] " | " st_note[s] " |"
    }
}' "$@" >"$out/summary.md.tmp" && mv "$out/summary.md.tmp" "$out/summary.md"
