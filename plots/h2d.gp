# h2d: copy bandwidth against message size, one line per case, from a fabricbench results.csv.
# usage: gnuplot -e "csv='results/RUN/results.csv'; out='results/RUN/h2d.png'" plots/h2d.gp
# Columns are read by their names in the header (results/SCHEMA.md).
set datafile separator ","
set datafile columnheaders
cases = "pinned_h2d pinned_d2h pageable_h2d pageable_d2h"
alone(c) = strcol("case") eq c && strcol("metric") eq "bandwidth" && strcol("ranks") eq "1" && strcol("src") eq "0"
# One data block per case, so each line joins only its own points.
do for [i = 1:words(cases)] {
    c = word(cases, i)
    eval sprintf('set table $case%d', i)
    plot csv using (column("bytes")):(column("median")) with table if (alone(c))
    unset table
}
set datafile separator whitespace
unset datafile columnheaders
set terminal pngcairo size 1000,600 noenhanced font ",11"
set output out
set title "h2d: host-device copy bandwidth, rank 0 alone (median of trials)"
set xlabel "message size (bytes, binary prefixes, log scale)"
set ylabel "bandwidth (GB/s = 1e9 B/s)"
set logscale x 2
set format x "%.0b %BB"
set grid
set key top right
plot for [i = 1:words(cases)] sprintf('$case%d', i) using 1:2 with linespoints title word(cases, i)
