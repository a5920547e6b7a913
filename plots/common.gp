# common: the terminals every plot uses. `fabricbench report` puts this in each plot's script,
# after the plot's variables (name, dat, width, height, ...) and before its template. `out`
# names the files written (default: the plot's name); report sets it to a temporary name and
# renames the files once gnuplot has finished.
if (!exists("out")) out = name
png_terminal = sprintf("pngcairo size %d,%d enhanced font 'Sans,11' linewidth 1.5", width, height)
svg_terminal = sprintf("svg size %d,%d enhanced font 'Sans,11' linewidth 1.5 background '#ffffff'", width, height)
set grid
set border 3
set tics nomirror
# draws the plot the template defines in plot_cmd twice: PNG, then SVG
draw = "eval 'set terminal ' . png_terminal; set output out . '.png'; eval plot_cmd; eval 'set terminal ' . svg_terminal; set output out . '.svg'; eval plot_cmd; set output"
