/* The runner's own header, for its three files only (runner.c runs a benchmark,
 * runner_measure.c times one case, runner_report.c turns it into rows and lines): one case's
 * measurements and the functions that cross between them. Not for anything outside runner*.c,
 * but for run_plan.c's dry run, which follows the same schedule (its bounds). */
#ifndef FB_RUNNER_IMPL_H
#define FB_RUNNER_IMPL_H

#include "runner.h"

/* A collective's iterations timed one by one, at most. */
enum { MAX_EACH = 200 };
/* Iterations of a trial, at most (calibration's bound). */
enum { MAX_ITERS = 100000 };

/* Calibration's rule (runner_measure.c), which the dry run's floor follows too (run_plan.c):
 * the first round's count; after a round of n iterations that took batch_us, the next round's
 * count, 0 when the count is decided (*again: that round repeats the deciding one, which then
 * ends it); and the iterations of a trial from the time of one. */
long fb_calib_first(const struct fb_case *c);
long fb_calib_next(long n, double batch_us, double target_us, bool *again);
long fb_calib_iters(double per_iter_us, double target_us, long min_iters);

/* One case's measurements on this rank. */
struct measured {
    double *samples; /* per trial: microseconds per iteration */
    double *synced;  /* --timing synced|both, collectives: per trial, this rank's mean of its
                        iterations timed one by one between barriers (OSU's way) */
    long synced_iters; /* ... iterations per synced trial (--iters, or calibrated with the
                          barriers: calibrate_synced) */
    long iters;
    double each[MAX_EACH]; /* collectives: iterations timed one by one, microseconds */
    long neach;
    size_t wrong;
    struct fb_value values[FB_MAX_VALUES]; /* FB_REPORTS_VALUES; trial_values' names */
    size_t nvalues;
    double *trial;   /* trial_values: [trial][FB_MAX_VALUES] */
    double cpu_wait; /* the share of the point's wall time this rank's thread spent runnable but
                        waiting for a CPU (fb_clock_cpu_wait_ns); negative when unknown */
};

/* Whether world rank `rank` takes part in case c (c->group set); the others sit it out but
 * still enter its barriers. */
bool fb_runner_is_active(const struct fb_case *c, int rank);

/* Collective: warm-up, calibration, trials and verification of one case. m->samples (and
 * m->trial with trial_values) hold r->opt->trials entries, owned by the caller; the rest of m
 * is filled here. Returns FB_OK, FB_ERR_UNSUPPORTED for a point waived with a reason (then the
 * other points go on), or the error every rank agreed on. */
fb_status fb_runner_measure(struct fb_runner *r, const struct fb_bench *b, const struct fb_ctx *ctx,
                            const struct fb_case *c, struct measured *m);

/* Rank 0, FB_REPORTS_VALUES: each figure once for the point, the smallest over the active
 * ranks (a batch that fits every GPU of the job), and once per rank when several took part.
 * vals[rank * FB_MAX_VALUES + i]; the metric names are rank 0's (mine). Adds rows to r->res
 * and prints a line per figure. Returns FB_OK, FB_ERR_NOMEM or what fb_results_add returns. */
fb_status fb_runner_report_values(struct fb_runner *r, const struct fb_bench *b,
                                  const struct fb_case *c, const struct measured *mine,
                                  const double *vals);

/* Rank 0: rows of one case from every rank's samples (all[rank * trials + t]), wrong[rank]
 * wrong elements, and with neach > 0 the iterations timed one by one in r->each_all; then the
 * point's line in the stdout table. Returns FB_OK, FB_ERR_NOMEM or what fb_results_add
 * returns. */
fb_status fb_runner_report(struct fb_runner *r, const struct fb_bench *b, const struct fb_case *c,
                           const double *all, const long long *wrong, long iters, long neach);

/* Rank 0, --timing synced|both, a collective case: rows time_synced_avg, time_synced_min and
 * time_synced_max from every rank's synced trials (synced[rank * trials + t]), the mean, least
 * and largest over the active ranks of each rank's mean iteration, statistics over the trials;
 * wrong: the point's wrong elements; then the point's line on stdout. Returns FB_OK,
 * FB_ERR_NOMEM or what fb_results_add returns. */
fb_status fb_runner_report_synced(struct fb_runner *r, const struct fb_bench *b,
                                  const struct fb_case *c, const double *synced, long long wrong,
                                  long iters);

/* Rank 0, trial_values: one row per figure, each trial's value taken from the rank whose time
 * set that trial (the slowest of the active ranks), so a split of the step adds up to the
 * `time` of the same trial. tv[(rank * trials + t) * FB_MAX_VALUES + i]; the figures' names
 * are rank 0's (mine); wrong: the point's wrong elements over the active ranks. Returns FB_OK,
 * FB_ERR_NOMEM or what fb_results_add returns. */
fb_status fb_runner_report_trial_values(struct fb_runner *r, const struct fb_bench *b,
                                        const struct fb_case *c, const struct measured *mine,
                                        const double *all, const double *tv, long long wrong,
                                        long iters);

/* Rank 0: a benchmark's heading on stdout (its name and summary when `first`, then with
 * group > 0 the group of ranks 0..group-1 on `nodes` nodes). */
void fb_runner_print_header(const struct fb_bench *b, const struct fb_options *o, int group,
                            int nodes, bool first);

/* Rank 0: the transport and the column heads of the stdout table for one kind of report. */
void fb_runner_print_columns(enum fb_report kind, const char *transport);

#endif
