/* The data of `fabricbench report`'s plots, taken from a run's rows: which rows each plot
 * shows, grouped into series (one line or bar group each), as the text of the plot's .dat file
 * and the gnuplot variables its script starts with (series titles, counts). Pure: no files, no
 * gnuplot; report_plots.c writes what this returns (docs/report.md describes each plot). */
#ifndef FB_REPORT_DATA_H
#define FB_REPORT_DATA_H

#include <stddef.h>

#include "results.h"
#include "status.h"

enum { FB_PLOT_WIDTH = 1000, FB_PLOT_HEIGHT = 600 };

struct fb_plot {
    char name[48];         /* file stem in RUN/plots: "allreduce_busbw", "p2p_matrix_mpi" */
    char template[32];     /* the template in plots/ (without .gp) that draws it */
    char caption[200];     /* one line for summary.md: what the plot shows */
    char *dat;             /* the .dat file's text (malloc'ed) */
    size_t dat_len;
    size_t data_lines;     /* lines of data in it (not comments, blank lines or headers) */
    char *vars;            /* gnuplot assignments for the script's start (malloc'ed) */
};

struct fb_plot_set {
    struct fb_plot *p;
    size_t n;
};

/* The plots the rows allow, in a fixed order: allreduce_busbw, densenet_fusion, step_scaling,
 * step_efficiency, step_batch, p2p_matrix_<transport>..., h2d, step_split. A plot whose rows
 * are absent is not in the set. FB_OK or FB_ERR_NOMEM (out is then empty). Release with
 * fb_report_plots_release (accepts a zeroed set). */
fb_status fb_report_plots(const struct fb_row *rows, size_t n, struct fb_plot_set *out);
void fb_report_plots_release(struct fb_plot_set *s);

/* The metrics of the step-time split, in stacking order (the `step` contract). */
extern const char *const fb_report_split_metrics[6];

#endif
