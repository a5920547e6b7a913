# allreduce_busbw: all-reduce bus bandwidth against message size, one line per GPU count.
# Data: dat, one block per series (series[i] is block i-1): bytes busbw_gbps p05 p95.
set title "all-reduce bus bandwidth, busbw = algbw x 2(n-1)/n (median of trials)" noenhanced
set xlabel "message size per rank (bytes, binary prefixes, log scale)"
set ylabel "busbw (GB/s, 1 GB = 10^9 B)"
set logscale x 2
set format x "%.0b%B"
set xtics 4
set key top left noenhanced
set yrange [0:*]
plot_cmd = "plot for [i=1:nseries] dat index (i-1) using 1:2 with linespoints pt 7 ps 0.8 title series[i]"
@draw
