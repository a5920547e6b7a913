# h2d: host-device copy bandwidth against size, pinned and pageable memory, both directions.
# Data: dat, one block per case (series[i] is block i-1): bytes bandwidth_gbps p05 p95.
set title "host-device copies, rank 0 alone (median of trials)" noenhanced
set xlabel "copy size (bytes, binary prefixes, log scale)"
set ylabel "bandwidth (GB/s, 1 GB = 10^9 B)"
set logscale x 2
set format x "%.0b%B"
set xtics 4
set key top left noenhanced
set yrange [0:*]
# pinned solid, pageable dashed
style(t) = strstrt(t, "pageable") ? 2 : 1
plot_cmd = "plot for [i=1:nseries] dat index (i-1) using 1:2 with linespoints pt 7 ps 0.8 dt style(series[i]) title series[i]"
@draw
