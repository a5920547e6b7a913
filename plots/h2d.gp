# h2d: host-device copy bandwidth against size, pinned and pageable memory, both directions.
# Data: dat, one block per case (series[i] is block i-1): bytes bandwidth_gbps p05 p95.
set title "host-device copies, rank 0 alone (median of trials)" noenhanced
set xlabel "copy size (log scale; 1 KiB = 1024 B)"
set ylabel "bandwidth (GB/s, 1 GB = 10^9 B)"
set logscale x 2
# exact powers of two with binary prefixes, written by report (gnuplot's own drift: "1023ki")
if (exists("binary_xtics")) { eval binary_xtics } else { set format x "%.0b%B" }
set key below horizontal noenhanced
set yrange [0:*]
# a little room left and right, so the end points are whole
set offsets graph 0.02, graph 0.02, 0, 0
# pinned solid, pageable dashed
style(t) = strstrt(t, "pageable") ? 2 : 1
plot_cmd = "plot for [i=1:nseries] dat index (i-1) using 1:2 with linespoints pt 7 ps 0.8 dt style(series[i]) title series[i]"
@draw
