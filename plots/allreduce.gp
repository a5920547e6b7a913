# allreduce: bus bandwidth against message size on all the job's ranks, from a results.csv.
# usage: gnuplot -e "csv='results/RUN/results.csv'; out='results/RUN/allreduce.png'" plots/allreduce.gp
# Columns are read by their names in the header (results/SCHEMA.md).
set datafile separator ","
set datafile columnheaders
cases = "out_of_place in_place"
ar(c) = strcol("bench") eq "allreduce" && strcol("case") eq c && strcol("metric") eq "busbw"
# The scaling curve runs on 1, 2, 4, ... ranks: plot the largest group, the whole job.
stats csv using (strcol("bench") eq "allreduce" ? column("ranks") : NaN) nooutput
ranks = int(STATS_max)
do for [i = 1:words(cases)] {
    c = word(cases, i)
    eval sprintf('set table $case%d', i)
    plot csv using (column("bytes")):(column("median")) with table if (ar(c) && column("ranks") == ranks)
    unset table
}
set datafile separator whitespace
unset datafile columnheaders
set terminal pngcairo size 1000,600 noenhanced font ",11"
set output out
set title sprintf("allreduce on %d ranks: bus bandwidth, busbw = algbw x 2(n-1)/n (median of trials)", ranks)
set xlabel "message size per rank (bytes, binary prefixes, log scale)"
set ylabel "busbw (GB/s = 1e9 B/s)"
set logscale x 2
set format x "%.0b %BB"
set grid
set key top left
plot for [i = 1:words(cases)] sprintf('$case%d', i) using 1:2 with linespoints title word(cases, i)
