# densenet_fusion: one step's DenseNet-121 gradient exchange time against the fusion threshold
# (Horovod's tensor fusion, DDP's buckets); the last point of each line is the flat buffer (one
# all-reduce of the whole gradient); the dashed line of the same colour is one all-reduce per
# tensor (no fusion). Data: dat, one block per series: threshold_bytes time_us p05 p95
# per_tensor_time_us.
set title "DenseNet-121 gradient exchange against the fusion threshold (median of trials)" noenhanced
set xlabel "fusion threshold (bytes, binary prefixes, log scale; last point: flat, one buffer)"
set ylabel "exchange time per step (ms)"
set logscale x 2
set format x "%.0b%B"
set xtics 4
set key outside right top noenhanced
set yrange [0:*]
plot_cmd = "plot for [i=1:nseries] dat index (i-1) using 1:($2/1000) with linespoints pt 7 ps 0.8 lc i title series[i] . ', fused', for [i=1:nseries] dat index (i-1) using 1:($5/1000) with lines dt 2 lc i title series[i] . ', per tensor'"
@draw
