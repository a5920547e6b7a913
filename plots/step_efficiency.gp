# step_efficiency: scaling efficiency against GPUs: per-GPU images/s at k GPUs over one GPU's,
# in percent (100% = linear scaling). Data: dat, one block per series: gpus efficiency_pct p05 p95.
set title "training step: scaling efficiency against GPUs (100% = linear)" noenhanced
set xlabel "GPUs"
set ylabel "scaling efficiency (%)"
set logscale x 2
if (exists("binary_xtics")) { eval binary_xtics } else { set xtics 2 }
set key bottom left noenhanced
set yrange [0:*]
# one GPU is the reference (100% by definition): the axis starts there
set xrange [1:*]
# room above 100% for the linear-scaling line
set offsets graph 0.02, graph 0.02, 10, 0
plot_cmd = "plot for [i=1:nseries] dat index (i-1) using 1:2 with linespoints pt 7 lc i title series[i], 100 with lines dt 3 lc 'gray' title 'linear scaling'"
@draw
