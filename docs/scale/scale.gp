# docs/scale.png from docs/scale/scale.dat (docs/scale/measure.sh): run time and rank 0's peak
# memory against ranks, p2p with every pair and sampled, and allreduce; medians of the repeats.
# Redraw: cd docs/scale && gnuplot scale.gp
set terminal pngcairo size 1100,420 font ',10'
set output 'scale.png'
set multiplot layout 1,2 title "fabricbench on 2 cores, ranks oversubscribed, pretend nodes of 4 ranks (tiny messages)"
set logscale xy 2
set xlabel 'ranks'
set key top left
set grid
set xrange [1.5:80]
set ylabel 'run time (s)'
med(b, m, col) = sprintf("< awk '$1==\"%s\" && $2==\"%s\" {print $3, $%d}' scale.dat | sort -n -k1,1 -k2,2 | awk '{v[$1]=v[$1] \" \" $2; n[$1]++} END {for (k in v) {split(v[k], a, \" \"); print k, a[int((n[k]+1)/2)]}}' | sort -n", b, m, col)
plot med('p2p','all',6) using 1:2 with linespoints pt 7 title 'p2p, every pair', \
     med('p2p','sampled',6) using 1:2 with linespoints pt 5 title 'p2p, sampled', \
     med('allreduce','-',6) using 1:2 with linespoints pt 9 title 'allreduce'
set ylabel "rank 0's peak RSS (MiB)"
unset logscale y
set yrange [0:*]
plot med('p2p','all',7) using 1:($2/1048576) with linespoints pt 7 title 'p2p, every pair', \
     med('p2p','sampled',7) using 1:($2/1048576) with linespoints pt 5 title 'p2p, sampled', \
     med('allreduce','-',7) using 1:($2/1048576) with linespoints pt 9 title 'allreduce'
unset multiplot
