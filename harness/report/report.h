/* `fabricbench report`'s work on a run folder, below the command line: the folder read whole
 * and checked (report_load.c), its plots' files written and drawn with gnuplot
 * (report_plots.c), and summary.md, of one run or of a sweep's launches (report_md.c). No MPI.
 * Each function prints its own one-line message ("report: ...") on failure. */
#ifndef FB_REPORT_H
#define FB_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "nccl_report.h"
#include "report_data.h"
#include "results_read.h"

enum fb_plot_state { FB_PLOT_DRAWN, FB_PLOT_SKIPPED, FB_PLOT_FAILED, FB_PLOT_OFF };

/* One run folder, read whole. */
struct fb_report_run {
    char dir[4096];
    char id[128];
    bool present;              /* a sweep's launch that wrote no results: false */
    struct fb_read_results res;
    struct fb_row *rows;       /* the rows with their detail flags inferred */
    size_t nrows;
    cJSON *env, *doctor;       /* doctor: NULL when there is no doctor.json */
    bool have_nccl;
    struct fb_nccl_report nccl;
    struct fb_plot_set plots;
    enum fb_plot_state *state; /* per plot */
};

/* A sweep's launch, from launches.csv. */
struct fb_report_launch {
    char variant[128];
    char command[2048];
    char exit_status[32];
    size_t line;
    struct fb_report_run run;
};

/* Reads dir's results.csv, env.json, doctor.json (optional) and NCCL logs (optional), and
 * computes the plots' data into r (zeroed by the caller; release with fb_report_run_release,
 * also after a failure). Warns when env.json says the run is incomplete. 0, 1 (out of memory)
 * or 2 (bad input, one line printed). Its messages begin with `who` (the command: "report",
 * "trend"). */
int fb_report_run_load(struct fb_report_run *r, const char *dir, const char *who);

/* Frees what fb_report_run_load allocated and zeroes r; accepts a zeroed run. */
void fb_report_run_release(struct fb_report_run *r);

/* launches.csv as `sweep` writes it (docs/sweep.md): variant and command columns required;
 * exit_status and run_dir (the launch's folder, relative to the sweep's; default: the
 * variant's name) are read when there. Each launch's run folder under top is loaded with
 * fb_report_run_load, except a failed launch's that has no results.csv (its run is left not
 * present). On success *out (malloc'ed; the caller releases each launch's run, then frees it)
 * holds *n launches; on failure *out is NULL and *n 0. 0, 1 (out of memory) or 2 (bad input,
 * one line printed). */
int fb_report_launches_load(const char *top, const char *path, struct fb_report_launch **out,
                            size_t *n);

/* Writes each plot's .dat and .gp into dir/plots and, with gnuplot (a path from
 * fb_gnuplot_find; NULL: none, the plots are skipped), draws it under a temporary name,
 * renamed when gnuplot has finished. Sets r->state of each plot; a plot gnuplot fails on is
 * warned about, not an error. 0, or 1 when a file or folder cannot be written (one line
 * printed). */
int fb_report_run_plots(struct fb_report_run *r, const char *gnuplot);

/* Writes r->dir/summary.md atomically: environment, doctor, NCCL, headline, telemetry and the
 * plots with their state (no_plots: `--no-plots` was given; no_gnuplot: gnuplot was not
 * found). 0, or 1 when it cannot be written (one line printed). */
int fb_report_write_summary(const struct fb_report_run *r, bool no_plots, bool no_gnuplot);

/* Writes top/summary.md of a sweep atomically: a table of the n launches l[] (the headline's
 * first figure of each benchmark, a link to each launch's summary.md), then each launch's
 * doctor, headline and plots. Each present launch's run folder is under top. 0, or 1 when it
 * cannot be written (one line printed). */
int fb_report_write_sweep_summary(const char *top, const struct fb_report_launch *l, size_t n,
                                  bool no_plots, bool no_gnuplot);

#endif
