# step_batch: training throughput against the batch per GPU, one line per GPU count.
# Data: dat, one block per series: batch images_per_s p05 p95.
set title "training step: images/s against the batch per GPU (median of trials)" noenhanced
set xlabel "batch per GPU (images, log scale)"
set ylabel "images/s (all GPUs together)"
set logscale x 2
if (exists("binary_xtics")) { eval binary_xtics } else { set xtics 2 }
set key top left noenhanced
set yrange [0:*]
# a little room left and right, so the end points are whole
set offsets graph 0.02, graph 0.02, 0, 0
plot_cmd = "plot for [i=1:nseries] dat index (i-1) using 1:2 with linespoints pt 7 lc i title series[i]"
@draw
