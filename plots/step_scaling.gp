# step_scaling: training throughput against GPUs, and the ideal (one GPU's throughput times
# the GPUs) dashed in the same colour. Data: dat, one block per series: gpus images_per_s p05
# p95 ideal_images_per_s.
set title "training step: images/s against GPUs (median of trials; dashed: ideal, linear from 1 GPU)" noenhanced
set xlabel "GPUs"
set ylabel "images/s (all GPUs together)"
set logscale x 2
if (exists("binary_xtics")) { eval binary_xtics } else { set xtics 2 }
set key top left noenhanced
set yrange [0:*]
# a little room left and right, so the end points are whole
set offsets graph 0.02, graph 0.02, 0, 0
plot_cmd = "plot for [i=1:nseries] dat index (i-1) using 1:2 with linespoints pt 7 lc i title series[i], for [i=1:nseries] dat index (i-1) using 1:5 with lines dt 2 lc i title series[i] . ', ideal'"
@draw
