/* The one runner: warm-up, calibrated timed trials, statistics, the cross-rank reduction (a
 * collective point takes as long as its slowest rank), verification after timing, and output
 * (a table on stdout and rows in results.csv). Benchmarks only provide hooks (bench.h). */
#ifndef FB_RUNNER_H
#define FB_RUNNER_H

#include "bench.h"
#include "links.h"
#include "progress.h"
#include "results.h"

struct fb_runner {
    struct fb_session *s;
    const struct fb_options *opt;
    struct fb_results *res; /* rank 0: where rows go; NULL on other ranks */
    struct fb_coll_comm *coll_comm; /* created on first need, over the whole world */
    int *node_of;           /* world rank -> node index */
    char (*links)[FB_LINK_LABEL]; /* rank 0: links[src * size + dst], on first need */
    char (*rank_names)[FB_RANK_NAME]; /* rank 0: "host gpu" of each rank, with links */
    bool links_done;
    double *each_all;       /* rank 0: every rank's iterations timed one by one */
    double *values_all;     /* rank 0: every rank's FB_REPORTS_VALUES figures */
    double *trial_all;      /* rank 0: every rank's trial_values, [rank][trial][value] */
    bool flush_pending;     /* rank 0: rows not yet in results.csv */
    double last_flush_end_us, last_flush_cost_us;
    int points, failed_points;
    /* rank 0, this benchmark's points: those whose ranks all said how long they waited for a
     * CPU, those where one waited more than FB_CPU_WAIT_BUSY of the time, and the most */
    int wait_points, busy_points;
    double busiest;
    struct fb_progress *progress; /* rank 0: a line per point; NULL = none */
    /* rank 0, with progress: starts point c's progress line (fb_run_plan_begin, which the
     * caller sets: the plan is counted above the runner, which never calls up into it) */
    void (*point_begin)(struct fb_progress *p, const char *bench, const struct fb_case *c,
                        int ranks);
    /* rank 0, optional: after each timed point is gathered and reported, every rank's trial
     * samples (all[rank * trials + t], microseconds per iteration; ranks outside the case
     * hold 0) and the iterations per trial; arg is point_arg (soak keeps a series of them) */
    void (*point_done)(void *arg, const struct fb_bench *b, const struct fb_case *c,
                       const double *all, int nranks, long trials, long iters);
    void *point_arg;
    /* --timing synced|both (issue 18) */
    double *synced_all;     /* rank 0: every rank's synced trials, [rank][trial] */
    long all_trials;        /* the trials trial_all and synced_all are sized for (soak changes
                               --trials between runs: a larger count makes them again) */
    int slow_rank;          /* FB_TEST_SLOW_RANK's rank (-1: none) */
    double slow_us;         /* ... and the microseconds it sleeps before every iteration */
};

/* Collective. Prepares a runner over an open session. FB_ERR_USAGE (one line on rank 0) when
 * FB_TEST_SLOW_RANK is set and not R:US. */
fb_status fb_runner_init(struct fb_runner *r, struct fb_session *s, const struct fb_options *opt,
                         struct fb_results *res);
void fb_runner_release(struct fb_runner *r);

/* Collective: runs every case of one benchmark. A benchmark that cannot run here (too few
 * ranks, no collectives) is waived with a reason and FB_ERR_UNSUPPORTED. Rows are flushed to
 * results.csv after every point (less often when rewriting costs more than a tenth of the time
 * between rewrites) and always when the benchmark ends. */
fb_status fb_runner_run(struct fb_runner *r, const struct fb_bench *b);

/* The cross-rank reduction: for each trial t, out[t] = the largest all[r * trials + t] over
 * the ranks r with flag[r] set (a point lasts as long as its slowest rank). Returns how many
 * ranks were flagged. */
int fb_runner_slowest(const double *all, const int *flag, int nranks, size_t trials, double *out);

/* The synced reduction (--timing synced, OSU's Avg, Min and Max): for each trial t, over the
 * ranks r with flag[r] set, mean[t], min[t] and max[t] of all[r * trials + t] (each rank's mean
 * iteration). Returns how many ranks were flagged (0: every output 0). */
int fb_runner_over_ranks(const double *all, const int *flag, int nranks, size_t trials,
                         double *mean, double *min, double *max);

/* Whether case c is timed OSU's way (--timing synced or both; collectives only), and whether
 * in back-to-back batches (every other case, and collectives unless --timing synced). */
bool fb_runner_synced(const struct fb_options *o, const struct fb_case *c);
bool fb_runner_batched(const struct fb_options *o, const struct fb_case *c);

/* FB_TEST_SLOW_RANK (tests only): "R:US" makes rank R sleep US microseconds before every
 * iteration of the benchmark, inside the runner's time (a call's own span, coll.h, leaves it
 * out: the other ranks then wait for R inside theirs). NULL or "" sets *rank to -1.
 * FB_ERR_USAGE with the reason in why when the text is not R:US (US from 1 to 1e7). */
fb_status fb_runner_test_slow(const char *text, int *rank, double *us, char *why, size_t len);

/* The rank counts a scaling benchmark runs on: --ranks as given, or 1, 2, 4, ... below `size`
 * and then `size`. Writes at most `cap`; returns how many. */
int fb_runner_groups(const struct fb_options *o, int size, int *out, size_t cap);

/* Derived metrics of a point, shared by the runner and its tests: GB/s (1e9 B/s) for `bytes`
 * moved in `time_us` microseconds. */
static inline double fb_gbps(double bytes, double time_us)
{
    return time_us > 0.0 ? bytes / time_us / 1e3 : 0.0;
}

#endif
