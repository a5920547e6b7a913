# allreduce_busbw: all-reduce bus bandwidth against message size, one line per GPU count.
# Data: dat, one block per series (series[i] is block i-1): bytes busbw_gbps p05 p95.
set title "all-reduce bus bandwidth, busbw = algbw x 2(n-1)/n (median of trials)" noenhanced
set xlabel "message size per rank (log scale; 1 KiB = 1024 B)"
set ylabel "busbw (GB/s, 1 GB = 10^9 B)"
set logscale x 2
# exact powers of two with binary prefixes, written by report (gnuplot's own drift: "1023ki")
if (exists("binary_xtics")) { eval binary_xtics } else { set format x "%.0b%B" }
set key top left noenhanced
set yrange [0:*]
# a little room left and right, so the end points are whole
set offsets graph 0.02, graph 0.02, 0, 0
plot_cmd = "plot for [i=1:nseries] dat index (i-1) using 1:2 with linespoints pt 7 ps 0.8 title series[i]"
@draw
