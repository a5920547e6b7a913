# densenet_fusion: one step's DenseNet-121 gradient exchange time against the fusion threshold
# (Horovod's tensor fusion, DDP's buckets), one line per GPU count and gradient type; in the
# same colour, dashed: one all-reduce per tensor (no fusion), dotted: the whole gradient in one
# flat buffer. Data: dat, one block per series: threshold_bytes time_us p05 p95
# per_tensor_time_us flat_time_us; has5[i] and has6[i] say whether series i has a per-tensor or a
# flat time at all (a run without --fusion off has none per tensor): without, no key entry.
set title "DenseNet-121 gradient exchange against the fusion threshold (median of trials)" noenhanced
set xlabel "fusion threshold (log scale; 1 KiB = 1024 B)"
set ylabel "exchange time per step (ms)"
set logscale x 2
# exact powers of two with binary prefixes, written by report (gnuplot's own drift: "1023ki")
if (exists("binary_xtics")) { eval binary_xtics } else { set format x "%.0b%B" }
set key outside right top noenhanced
set yrange [0:*]
# a little room left and right, so the end points are whole
set offsets graph 0.02, graph 0.02, 0, 0
plot_cmd = "plot for [i=1:nseries] dat index (i-1) using 1:($2/1000) with linespoints pt 7 ps 0.8 lc i title series[i] . ', fused', for [i=1:nseries] dat index (i-1) using 1:($5/1000) with lines dt 2 lc i title (has5[i] ? series[i] . ', per tensor' : ''), for [i=1:nseries] dat index (i-1) using 1:($6/1000) with lines dt 3 lw 2 lc i title (has6[i] ? series[i] . ', flat' : '')"
@draw
