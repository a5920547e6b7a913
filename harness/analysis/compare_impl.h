/* What compare's own files share and no other module may call: the plots of compare_plots.c,
 * which compare.md (compare_out.c) lists. Included only by harness/analysis/compare*.c. */
#ifndef FB_COMPARE_IMPL_H
#define FB_COMPARE_IMPL_H

#include <stdbool.h>
#include <stdio.h>

#include "compare.h"

/* One plot per (bench, metric) with up to 12 series that have more than one size: base dashed,
 * new solid, the same colour, each a gnuplot script out/compare-BENCH-METRIC.gp and its PNG.
 * Lists the PNGs made in md (or says there are none). Without gnuplot on PATH, warns, sets
 * *gnuplot_missing and makes none. Returns 0, or 1 when a script cannot be written. */
int fb_compare_write_plots(const char *out, const struct fb_comparison *c, bool machines,
                           const char *bname, const char *nname, FILE *md, bool *gnuplot_missing);

#endif
