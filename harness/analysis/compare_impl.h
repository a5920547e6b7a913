/* What compare's own files share and no other module may call: the steps both noise rules take
 * (compare.c, compare_runs.c), and the plots of compare_plots.c, which compare.md
 * (compare_out.c) lists. Included only by harness/analysis/compare*.c. */
#ifndef FB_COMPARE_IMPL_H
#define FB_COMPARE_IMPL_H

#include <stdbool.h>
#include <stdio.h>

#include "compare.h"

/* The steps both rules (fb_compare_judge, fb_compare_judge_runs) take first: no ratio (a
 * non-finite or negative median: n/a), equal zeros (same), within the threshold (same; points
 * for a fraction), a metric with no better way (changed). Sets *ratio (NAN when there is none)
 * and returns true with *v when they decide; false when the change is beyond the threshold and
 * the noise is left to judge. */
bool fb_compare_screen(const struct fb_row *base, const struct fb_row *cur, double threshold,
                       double *ratio, enum fb_cmp_verdict *v);

/* REGRESSION when `ratio` (new / base) is the worse way for the metric, else improved. */
enum fb_cmp_verdict fb_compare_way(const char *metric, double ratio);

/* One plot per (bench, metric) with up to 12 series that have more than one size: base dashed,
 * new solid, the same colour, each a gnuplot script out/compare-BENCH-METRIC.gp and its PNG.
 * Lists the PNGs made in md (or says there are none). Without gnuplot on PATH, warns, sets
 * *gnuplot_missing and makes none. Returns 0, or 1 when a script cannot be written. */
int fb_compare_write_plots(const char *out, const struct fb_comparison *c, bool machines,
                           const char *bname, const char *nname, FILE *md, bool *gnuplot_missing);

#endif
