# step_split: where a training step's time goes, one stacked bar per GPU count and batch:
# data wait, host-to-device copy, compute, exposed communication (what overlap did not hide),
# optimizer update, and the rest. Data: dat, a header line then one line per bar: label and the
# six parts in us per step.
set title "training step: time per step split into its parts (median of trials)" noenhanced
set ylabel "time per step (ms)"
set xlabel ""
set datafile columnheaders
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.7
set xtics rotate by -30 noenhanced
set key outside right top noenhanced
set yrange [0:*]
part_title(k) = k == 1 ? "data wait" : k == 2 ? "host-to-device copy" : k == 3 ? "compute" : k == 4 ? "exposed communication" : k == 5 ? "optimizer update" : "other"
plot_cmd = "plot for [k=1:6] dat using (column(k+1)/1000):xtic(1) title part_title(k)"
@draw
