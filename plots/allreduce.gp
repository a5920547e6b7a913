# allreduce: bus bandwidth against message size, from a fabricbench results.csv.
# usage: gnuplot -e "csv='results/RUN/results.csv'; out='results/RUN/allreduce.png'" plots/allreduce.gp
# Columns (results/SCHEMA.md): 2 bench, 3 case, 11 bytes, 16 metric, 19 median.
set datafile separator ","
cases = "out_of_place in_place"
pick(c) = strcol(2) eq "allreduce" && strcol(3) eq c && strcol(16) eq "busbw"
# One data block per case, so each line joins only its own points.
do for [i = 1:words(cases)] {
    c = word(cases, i)
    eval sprintf('set table $case%d', i)
    plot csv using 11:19 with table if (pick(c))
    unset table
}
set datafile separator whitespace
set terminal pngcairo size 1000,600 noenhanced font ",11"
set output out
set title "allreduce: bus bandwidth, busbw = algbw x 2(n-1)/n (median of trials)"
set xlabel "message size per rank (bytes, binary prefixes, log scale)"
set ylabel "busbw (GB/s = 1e9 B/s)"
set logscale x 2
set format x "%.0b %BB"
set grid
set key top left
plot for [i = 1:words(cases)] sprintf('$case%d', i) using 1:2 with linespoints title word(cases, i)
