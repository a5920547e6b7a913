/* `fabricbench trend`'s outputs: the terminal verdict, trend.md, trend.csv and one plot per
 * series (PNG and SVG through gnuplot, its steps marked), each step labelled with what changed
 * in the fingerprint at that run. */
#ifndef FB_TREND_OUT_H
#define FB_TREND_OUT_H

#include <stdbool.h>
#include <stddef.h>

#include "trend.h"

/* One run of the series, in run order. */
struct fb_trend_run {
    char dir[4096];
    char id[128];
    char started[40];      /* ISO 8601 UTC, "" when unknown */
    const char *time_from; /* "env.json", "run id" or "argument order" */
};

/* Writes out/trend.md, out/trend.csv and, unless no_plots, out/trend-<k>.gp, .png and .svg
 * (k: the series' index; skipped with a line when gnuplot is not on PATH), each file
 * atomically, then prints the verdict: the runs, each step with its label, and whether the
 * latest run sits past a worse step. out must exist. 0, or 1 when a file cannot be written (one
 * line printed): a folder, link or FIFO in the place of any of them is found
 * (fb_run_folder_output) before anything is written or printed. */
int fb_trend_write(const char *out, const struct fb_trend_run *runs, size_t nruns,
                   const struct fb_trend_series *s, size_t ns, double threshold, bool no_plots);

#endif
