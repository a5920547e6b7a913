# p2p_matrix: one-way bandwidth of every ordered pair of ranks alone, as a heat map with each
# cell's value written in it. Data: dat: src dst bandwidth_gbps (NaN: not measured, the
# diagonal: left blank), one block per src row.
set title sprintf("p2p bandwidth matrix over %s, each pair alone (GB/s, median of trials)", transport) noenhanced
set xlabel "destination rank"
set ylabel "source rank"
set xrange [-0.5:nranks-0.5]
set yrange [nranks-0.5:-0.5]
set xtics 1
set ytics 1
set size ratio -1
unset grid
set cblabel "bandwidth (GB/s, 1 GB = 10^9 B)" offset 2,0
set cbrange [0:*]
# light to mid blue, so the black values stay readable
set palette defined (0 '#ffffff', 1 '#c6dbef', 2 '#6baed6')
set key off
plot_cmd = "plot dat using 2:1:3 with image, '' using 2:1:(strcol(3) eq 'NaN' ? '' : sprintf('%.2f', $3)) with labels font ',12' tc rgb 'black'"
@draw
