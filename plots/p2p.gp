# p2p: bandwidth of the first swept pair against message size, one line per transport and
# direction, from a fabricbench results.csv.
# usage: gnuplot -e "csv='results/RUN/results.csv'; out='results/RUN/p2p.png'" plots/p2p.gp
# Columns are read by their names in the header (results/SCHEMA.md).
set datafile separator ","
set datafile columnheaders
series = "mpi:sweep_uni mpi:sweep_bidir nccl:sweep_uni nccl:sweep_bidir ipc:sweep_uni ipc:sweep_bidir ipc-staged:sweep_uni ipc-staged:sweep_bidir"
tr(s) = s[1:strstrt(s, ":") - 1]
kase(s) = s[strstrt(s, ":") + 1:]
metric(s) = kase(s) eq "sweep_uni" ? "bandwidth" : "bandwidth_total"
pick(s) = strcol("bench") eq "p2p" && strcol("transport") eq tr(s) && strcol("case") eq kase(s) && strcol("metric") eq metric(s) && strcol("src") eq "0" && strcol("dst") eq "1"
# One data block per series; series that were not measured (nccl on host) stay empty.
do for [i = 1:words(series)] {
    s = word(series, i)
    eval sprintf('set table $s%d', i)
    plot csv using (column("bytes")):(column("median")) with table if (pick(s))
    unset table
}
keep = ""
do for [i = 1:words(series)] {
    eval sprintf('rows = |$s%d|', i)
    if (rows > 0) { keep = keep . sprintf(" %d", i) }
}
name(s) = tr(s) . " " . (kase(s) eq "sweep_uni" ? "0>1" : "0<>1 (total)")
set datafile separator whitespace
unset datafile columnheaders
set terminal pngcairo size 1000,600 noenhanced font ",11"
set output out
set title "p2p: ranks 0 and 1, bandwidth against message size (median of trials)"
set xlabel "message size (bytes, binary prefixes, log scale)"
set ylabel "bandwidth (GB/s = 1e9 B/s)"
set logscale x 2
set format x "%.0b %BB"
set grid
set key top left
plot for [k in keep] sprintf('$s%s', k) using 1:2 with linespoints title name(word(series, int(k)))
