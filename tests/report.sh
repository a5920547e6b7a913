#!/bin/sh
# fabricbench report on tests/data/report/run (a real 2-rank host run of h2d, p2p, allreduce and
# densenet_allreduce, with step and telemetry rows added in the same schema; see the README
# there): every expected plot is a PNG and an SVG of the size report sets, each .dat holds as
# many data lines as the CSV has rows for it, values land where they belong, summary.md holds
# every headline figure `run` printed for that run (headline.txt) and the step rows' figures, a
# script redraws its plot from the plots folder, and without gnuplot on PATH summary.md is
# written, no PNG, one line says the plots were skipped. Bad input (a missing folder, a
# malformed results.csv, env.json or launches.csv) exits 2 with one line naming file and line,
# and writes nothing. A sweep's folder gets a launches table and a report per launch. Rows with an
# expected figure get "Short of the hardware", each series judged at its largest size.
. "$(dirname "$0")/lib.sh"
bin=$1
data=$2
work=$(mktemp -d)
trap '[ -n "$KEEP" ] || rm -rf "$work"' EXIT; echo "work: $work"
command -v gnuplot >/dev/null 2>&1 || { echo "gnuplot not on PATH: cannot check the plots"; exit 77; }
W=1000 H=600
plots="allreduce_busbw densenet_fusion step_scaling step_efficiency step_batch p2p_matrix_mpi
p2p_matrix_ipc p2p_matrix_ipc_staged h2d step_split"

# png_size FILE: "WIDTH HEIGHT" from the IHDR chunk, or "bad" without the PNG signature.
png_size() {
    sig=$(od -An -tx1 -N8 "$1" | tr -d ' \n')
    [ "$sig" = 89504e470d0a1a0a ] || { echo bad; return; }
    [ "$(dd if="$1" bs=1 skip=12 count=4 2>/dev/null)" = IHDR ] || { echo bad; return; }
    set -- $(od -An -tu1 -j16 -N8 "$1")
    echo "$(( ($1 << 24) + ($2 << 16) + ($3 << 8) + $4 )) $(( ($5 << 24) + ($6 << 16) + ($7 << 8) + $8 ))"
}
# svg_size FILE: the root <svg> element's width and height attributes.
svg_size() {
    tr '\n' ' ' <"$1" | sed -n 's/.*<svg \([^>]*\)>.*/\1/p' |
        sed -n 's/.*width="\([0-9]*\)".*height="\([0-9]*\)".*/\1 \2/p'
}
# data_lines FILE: lines of data in a .dat (not comments, blank lines or the header).
data_lines() { grep -v '^#' "$1" | grep -v '^label ' | grep -c .; }

cp -r "$data/run" "$work/run"
csv=$work/run/results.csv
cp "$csv" "$work/results.orig"

# 1. The report with gnuplot.
"$bin" report "$work/run" >"$work/out" 2>"$work/err" || fail "report exited $?: $(cat "$work/err")"
grep -q "summary.md, 10 of 10 plots drawn" "$work/out" || fail "unexpected output: $(cat "$work/out")"
[ -s "$work/run/summary.md" ] || fail "no summary.md"
cmp -s "$csv" "$work/results.orig" || fail "results.csv was changed"
for p in $plots; do
    for ext in png svg gp dat; do
        [ -s "$work/run/plots/$p.$ext" ] || fail "plots/$p.$ext missing or empty"
    done
    [ "$(png_size "$work/run/plots/$p.png")" = "$W $H" ] ||
        fail "$p.png: size $(png_size "$work/run/plots/$p.png"), expected $W $H"
    [ "$(svg_size "$work/run/plots/$p.svg")" = "$W $H" ] ||
        fail "$p.svg: <svg> size '$(svg_size "$work/run/plots/$p.svg")', expected $W $H"
    grep -q "^\[SVG\](plots/$p.svg)" "$work/run/summary.md" || fail "summary.md does not link $p.svg"
    grep -q "^!\[$p\](plots/$p.png)" "$work/run/summary.md" || fail "summary.md does not show $p.png"
done
[ "$(ls "$work/run/plots" | wc -l)" = 40 ] || fail "plots/ holds $(ls "$work/run/plots" | wc -l) files, expected 40: $(ls -a "$work/run/plots")"
ls -a "$work/run/plots" | grep -q tmp && fail "temporary files left in plots/"

# 2. Each .dat has the CSV's rows for it.
count() { csv_awk "$1 { n++ } END { print n + 0 }" "$csv"; }
expect() { got=$(data_lines "$work/run/plots/$1.dat"); [ "$got" = "$2" ] || fail "$1.dat: $got data lines, expected $2"; }
expect allreduce_busbw "$(count 'v("bench") == "allreduce" && v("case") == "out_of_place" && v("metric") == "busbw" && v("src") == "" && v("ranks") > 1')"
expect densenet_fusion "$(count 'v("bench") == "densenet_allreduce" && v("case") ~ /^fusion_/ && v("metric") == "time" && v("src") == "" && v("ranks") > 1')"
expect step_scaling "$(count 'v("bench") == "step" && v("metric") == "images_per_s" && v("src") == ""')"
expect step_batch "$(count 'v("bench") == "step" && v("metric") == "images_per_s" && v("src") == ""')"
expect step_efficiency "$(count 'v("bench") == "step" && v("metric") == "scaling_efficiency" && v("src") == ""')"
expect h2d "$(count 'v("bench") == "h2d" && v("metric") == "bandwidth" && v("ranks") == 1 && v("src") == 0')"
expect step_split "$(csv_awk 'v("bench") == "step" && v("metric") ~ /^(data_wait|h2d|compute|comm_exposed|update|other)_us$/ { k[v("case") v("dtype") v("bytes") v("batch") ":" v("ranks")] = 1 } END { for (x in k) n++; print n }' "$csv")"
for t in mpi ipc ipc-staged; do
    n=$(csv_awk 'v("bench") == "p2p" && v("case") == "matrix_uni" && v("metric") == "bandwidth" && v("transport") == t { if (v("src") + 1 > m) m = v("src") + 1; if (v("dst") + 1 > m) m = v("dst") + 1 } END { print m * m }' t=$t "$csv")
    expect "p2p_matrix_$(echo $t | tr - _)" "$n"
done
[ "$(data_lines "$work/run/plots/allreduce_busbw.dat")" -gt 10 ] || fail "allreduce_busbw.dat has too few points"

# 3. Values where they belong: the 4 MiB busbw point, a matrix cell, the ideal line, a bar.
v=$(csv_awk 'v("bench") == "allreduce" && v("case") == "out_of_place" && v("metric") == "busbw" && v("ranks") == 2 && v("bytes") == 4194304 { print v("median") }' "$csv")
grep -q "^4194304 $v " "$work/run/plots/allreduce_busbw.dat" || fail "allreduce_busbw.dat lacks '4194304 $v'"
v=$(csv_awk 'v("bench") == "p2p" && v("case") == "matrix_uni" && v("metric") == "bandwidth" && v("transport") == "mpi" && v("src") == 1 && v("dst") == 0 { print v("median") }' "$csv")
grep -qx "1 0 $v" "$work/run/plots/p2p_matrix_mpi.dat" || fail "p2p_matrix_mpi.dat lacks '1 0 $v'"
grep -qx "0 0 NaN" "$work/run/plots/p2p_matrix_mpi.dat" || fail "the matrix's diagonal is not NaN"
one=$(csv_awk 'v("bench") == "step" && v("case") == "step" && v("metric") == "images_per_s" && v("ranks") == 1 && v("batch") == 32 { print v("median") }' "$csv")
two=$(csv_awk 'v("bench") == "step" && v("case") == "step" && v("metric") == "images_per_s" && v("ranks") == 2 && v("batch") == 32 { print v("median") }' "$csv")
awk -v one="$one" -v two="$two" '$1 == 2 && $2 == two { found = 1; if (($5 - 2 * one) ^ 2 > 1e-12) bad = 1 } END { exit !(found && !bad) }' "$work/run/plots/step_scaling.dat" ||
    fail "step_scaling.dat: no 2-GPU point $two with ideal 2 x $one"
comp=$(csv_awk 'v("bench") == "step" && v("case") == "step_no_overlap" && v("metric") == "compute_us" && v("ranks") == 2 && v("batch") == 32 { print v("median") }' "$csv")
grep -q "^\"2 ranks, batch 32, no overlap\" [^ ]* [^ ]* $comp " "$work/run/plots/step_split.dat" ||
    fail "step_split.dat: the bar '2 ranks, batch 32, no overlap' lacks compute $comp"

# 4. summary.md: every headline row `run` printed for this run, the step's headline, telemetry,
# environment and doctor.
tail -n +3 "$data/headline.txt" | while read -r bench kase transport dtype ranks who size metric median unit; do
    row="| $kase | $transport | $dtype | $ranks | $who | $size | $metric | $median | $unit |"
    grep -qF "$row" "$work/run/summary.md" || echo "$bench $row"
done >"$work/missing"
[ -s "$work/missing" ] && fail "summary.md lacks the run's headline rows: $(cat "$work/missing")"
[ "$(grep -c '^| [a-z_0-9+-]* | [a-z-]* | [a-z0-9-]* | [0-9]* | [0-9<>all]* | [0-9bKMG-]* | [a-z_]* | [0-9.]* |' "$work/run/summary.md")" = \
  "$(($(wc -l <"$data/headline.txt") - 2 + 2))" ] || fail "summary.md's headline has other rows than the run's (+2 step rows)"
ips=$(printf '%.3f' "$two")
grep -qF "| step | mpi | float32 | 2 | all | b32 | images_per_s | $ips | images/s |" "$work/run/summary.md" ||
    fail "summary.md lacks step's headline $ips images/s at batch 32 on 2 ranks"
grep -qF "| step | 0 | 57 | 93 (95) | 41 (42) | 12.00 (12.29) | 252 (258) |" "$work/run/summary.md" ||
    fail "summary.md's telemetry row for step, rank 0, is not as in the CSV"
grep -qF "| host | vm (Linux" "$work/run/summary.md" || fail "summary.md lacks the host"
grep -qF '| `binding` | PASS |' "$work/run/summary.md" || fail "summary.md lacks doctor's binding verdict"
grep -qF 'Open MPI v4.1.4' "$work/run/summary.md" || fail "summary.md lacks the MPI library"

# 5. A saved script redraws its plot where it lies.
rm "$work/run/plots/h2d.png" "$work/run/plots/h2d.svg"
(cd "$work/run/plots" && gnuplot h2d.gp) || fail "gnuplot h2d.gp failed in plots/"
[ "$(png_size "$work/run/plots/h2d.png")" = "$W $H" ] || fail "h2d.gp did not redraw h2d.png"
[ -s "$work/run/plots/h2d.svg" ] || fail "h2d.gp did not redraw h2d.svg"

# 6. Without gnuplot on PATH: summary.md, the scripts and data, no PNG, one line, exit 0.
cp -r "$data/run" "$work/nognu"
mkdir "$work/empty"
env PATH="$work/empty" "$bin" report "$work/nognu" >"$work/out" 2>"$work/err" ||
    fail "report without gnuplot exited $?: $(cat "$work/err")"
[ -s "$work/nognu/summary.md" ] || fail "no summary.md without gnuplot"
ls "$work/nognu/plots/"*.png >/dev/null 2>&1 && fail "PNGs written without gnuplot"
[ -s "$work/nognu/plots/h2d.gp" ] || fail "no scripts without gnuplot"
[ "$(grep -c 'gnuplot not found on PATH: 10 plots skipped' "$work/out")" = 1 ] ||
    fail "no skip line: $(cat "$work/out" "$work/err")"
grep -q "Plots skipped: gnuplot was not found" "$work/nognu/summary.md" || fail "summary.md does not say the plots were skipped"
cmp -s "$work/nognu/results.csv" "$data/run/results.csv" || fail "results.csv changed without gnuplot"

# 7. --no-plots: summary.md only.
cp -r "$data/run" "$work/noplots"
"$bin" report --no-plots "$work/noplots" >/dev/null 2>&1 || fail "--no-plots failed"
[ -s "$work/noplots/summary.md" ] && [ ! -e "$work/noplots/plots" ] || fail "--no-plots wrote plots or no summary"

# 8. Bad input: exit 2, one line naming file and line, nothing written.
bad() { # name expected-message-part dir
    "$bin" report "$3" >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" = 2 ] || fail "$1: exit $rc, expected 2"
    [ "$(wc -l <"$work/err")" = 1 ] || fail "$1: $(wc -l <"$work/err") error lines: $(cat "$work/err")"
    grep -qF "$2" "$work/err" || fail "$1: '$(cat "$work/err")' does not say '$2'"
    [ -e "$3/summary.md" ] || [ -e "$3/plots" ] && fail "$1: something was written in $3"
}
bad "missing folder" "cannot open run folder '$work/nope'" "$work/nope"
mkdir "$work/badcsv" && cp "$data/run/env.json" "$work/badcsv/"
sed '5s/,3,/,three,/' "$csv" >"$work/badcsv/results.csv"
bad "malformed results.csv" "$work/badcsv/results.csv:5: column 'samples': 'three' is not an integer" "$work/badcsv"
mkdir "$work/badenv" && cp "$csv" "$work/badenv/" && head -n 20 "$data/run/env.json" >"$work/badenv/env.json"
bad "truncated env.json" "$work/badenv/env.json:" "$work/badenv"
grep -q "not valid JSON" "$work/err" || fail "truncated env.json: $(cat "$work/err")"
mkdir "$work/noenv" && cp "$csv" "$work/noenv/"
bad "missing env.json" "cannot open '$work/noenv/env.json'" "$work/noenv"

# 9. A sweep's folder: a launches table, a section and a report per launch; a failed launch
# without results is listed, not an error.
mkdir "$work/sweep"
cp -r "$data/run" "$work/sweep/bind-socket"
cp -r "$data/run" "$work/sweep/no-p2p"
printf 'variant,command,exit_status\nbind-socket,"mpirun -np 2 --map-by socket fabricbench run",0\nno-p2p,"env NCCL_P2P_DISABLE=1 mpirun -np 2 fabricbench run",0\nbroken,"mpirun -np 64 fabricbench run",1\n' >"$work/sweep/launches.csv"
"$bin" report "$work/sweep" >"$work/out" 2>"$work/err" || fail "sweep report exited $?: $(cat "$work/err")"
s=$work/sweep/summary.md
[ "$(grep -c '^| `[a-z0-9-]*` | `mpirun\|^| `[a-z0-9-]*` | `env' "$s")" = 3 ] || fail "sweep summary: not 3 launch rows"
grep -qF '| `no-p2p` | `env NCCL_P2P_DISABLE=1 mpirun -np 2 fabricbench run` | 0 |' "$s" || fail "sweep summary lacks no-p2p's command"
grep -qF '| `broken` | `mpirun -np 64 fabricbench run` | 1 | no results | - |' "$s" || fail "sweep summary lacks the failed launch"
grep -qF '![h2d](no-p2p/plots/h2d.png)' "$s" || fail "sweep summary does not show no-p2p's plots"
for l in bind-socket no-p2p; do
    [ -s "$work/sweep/$l/summary.md" ] || fail "no $l/summary.md"
    [ "$(png_size "$work/sweep/$l/plots/step_split.png")" = "$W $H" ] || fail "no $l/plots/step_split.png"
done
printf 'variant,command\nx,"a",0\n' >"$work/sweep/launches.csv"
rm "$s"
"$bin" report "$work/sweep" >"$work/out" 2>"$work/err"
[ $? = 2 ] && grep -qF "launches.csv:2: 3 fields, expected the header's 2" "$work/err" ||
    fail "malformed launches.csv: $(cat "$work/err")"
[ -e "$s" ] && fail "malformed launches.csv: summary.md written"

# "Short of the hardware": each series with an expected figure at its largest size, against its
# own: pair 0>1 short at 1 MiB but not at 4 MiB (not listed), pair 1>0 short at 4 MiB (listed,
# with its bound), the h2d row without an expected figure left out; a run without the columns
# has no such section (the fixture above).
grep -q '^## Short of the hardware' "$work/run/summary.md" && fail "a run without expected figures got 'Short of the hardware'"
mkdir "$work/short"
cp "$data/run/env.json" "$work/short/"
{
    echo "$(head -n 1 "$data/run/results.csv"),expected,bound"
    id=20250612-101500-vm
    for r in "0,1,1048576,0.05,0.1" "0,1,4194304,0.095,0.1" "1,0,4194304,0.05,0.1" "1,0,1048576,0.099,0.1"; do
        IFS=, read -r src dst bytes med exp <<EOT
$r
EOT
        echo "$id,p2p,sweep_uni,host,mpi,network,2,2,$src,$dst,,$bytes,,,,10,bandwidth,GB/s,3,$med,$med,$med,$med,$med,$med,0,0,$exp,eth 800 Mb/s veth1"
    done
    echo "$id,h2d,pinned_h2d,host,memcpy,,1,1,0,,,4194304,,,,10,bandwidth,GB/s,3,9,9,9,9,9,9,0,0,,"
} >"$work/short/results.csv"
"$bin" report --no-plots "$work/short" >"$work/out" 2>"$work/err" || fail "report of expected rows exited $?: $(cat "$work/err")"
short=$(sed -n '/^## Short of the hardware$/,/^## /p' "$work/short/summary.md")
[ "$(echo "$short" | grep -c '^| p2p')" = 1 ] || fail "'Short of the hardware' does not list exactly one series: $short"
echo "$short" | grep -Eq '^\| p2p \| sweep.uni \| mpi \| 2 \| 1.*0 \| 4M \| bandwidth \| 0\.05 \| 0\.1 \| 50% \| eth 800 Mb/s veth1 \|$' ||
    fail "'Short of the hardware' does not list pair 1>0 at 4M, 50% of eth 800 Mb/s veth1: $short"
echo "$short" | grep -qx '1 of 2 series under 80% of their expected figure.' ||
    fail "'Short of the hardware' does not count 1 of 2 series: $short"

# Matrix rows the heat maps must survive: a rank as large as results.csv allows (src + 1 wrapped
# once: a heap overflow) draws no map; two transports whose names make the same file name
# ("a.b", "a_b") get a map each, not one written over the other.
mkdir "$work/odd"
cp "$data/run/env.json" "$work/odd/"
{
    head -n 1 "$data/run/results.csv"
    id=20250612-101500-vm
    echo "$id,p2p,matrix_uni,host,big,,1,2,2147483647,0,,1048576,,,,1,bandwidth,GB/s,3,1,1,1,1,1,1,0,0"
    for t in a.b a_b; do
        for pair in 0,1 1,0; do
            echo "$id,p2p,matrix_uni,host,$t,,1,2,$pair,,1048576,,,,1,bandwidth,GB/s,3,2,2,2,2,2,2,0,0"
        done
    done
} >"$work/odd/results.csv"
"$bin" report "$work/odd" >"$work/out" 2>"$work/err" || fail "report of odd matrix rows exited $?: $(cat "$work/err")"
[ ! -e "$work/odd/plots/p2p_matrix_big.png" ] || fail "a matrix of rank 2147483647 was drawn"
for f in p2p_matrix_a_b p2p_matrix_a_b_2; do
    [ -s "$work/odd/plots/$f.png" ] && [ -s "$work/odd/plots/$f.gp" ] || fail "no $f plot: $(ls "$work/odd/plots")"
    # each script reads its own data file
    grep -qx "name = '$f'" "$work/odd/plots/$f.gp" || fail "$f.gp reads another plot's data: $(grep '^name' "$work/odd/plots/$f.gp")"
done
[ "$(grep -lF 'over a.b at' "$work/odd/plots/"p2p_matrix_a_b*.dat | wc -l)" = 1 ] &&
    [ "$(grep -lF 'over a_b at' "$work/odd/plots/"p2p_matrix_a_b*.dat | wc -l)" = 1 ] ||
    fail "the two transports' maps do not each hold their own data: $(head -n 1 "$work/odd/plots/"p2p_matrix_a_b*.dat)"
finish
