# locate_heat: `fabricbench locate`'s node x node bandwidth of its tournament (phase 2), as a
# heat map with each cell's value written in it: row a, column b is a's own bandwidth while it
# exchanged with b, both ways at once. Data: dat: a b bandwidth_gbps (NaN: not measured), one
# block per row. Variables: nnodes, labels (the node names for the tics, a gnuplot tics list).
set title "locate: node x node bandwidth, each round's pairs at once (GB/s, median of trials)" noenhanced
set xlabel "partner node"
set ylabel "node"
set xrange [-0.5:nnodes-0.5]
set yrange [nnodes-0.5:-0.5]
eval "set xtics rotate by 45 right (" . labels . ")"
eval "set ytics (" . labels . ")"
set size ratio -1
unset grid
set cblabel "bandwidth (GB/s, 1 GB = 10^9 B)" offset 2,0
set cbrange [0:*]
set palette defined (0 '#ffffff', 1 '#c6dbef', 2 '#6baed6')
set key off
plot_cmd = "plot dat using 2:1:3 with image, '' using 2:1:(strcol(3) eq 'NaN' ? '' : sprintf('%.2f', $3)) with labels font ',10' tc rgb 'black' noenhanced"
@draw
