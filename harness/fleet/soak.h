/* `soak`'s orchestration, the fleet layer: the soak's state and the hooks cli/cmd_soak.c hands
 * to run's command (soak_run.c: intervals, the figure's series and verdict), and the health
 * counters of every node (soak_health.c: health.csv and their findings). */
#ifndef FB_SOAK_H
#define FB_SOAK_H

#include <stdbool.h>
#include <stdio.h>

#include "health.h"
#include "nccl_line.h"
#include "log.h"
#include "run_ctx.h"
#include "soak_rule.h"

struct fb_telemetry_nvml;

enum { FB_SOAK_MAX_POINTS = 16 };

/* One point of the current interval, as the runner reported it (rank 0). */
struct fb_soak_point {
    char bench[24], kase[48];
    size_t bytes;
    double bus_factor;
    bool collective;
    int ranks;          /* the ranks it runs on (--ranks: fewer than the job's) */
    long iters, trials; /* the interval's trials (soak fits them to it: fit_point) */
    double it_us;       /* its slowest iteration, microseconds */
    double *all; /* [rank * trials + t] */
};

/* One point's baseline over the intervals (rank 0). */
struct fb_soak_series {
    double *base; /* the slowest rank's trials of the baseline intervals */
    size_t nbase;
    double median, mad, limit;
    bool ready;
};

/* One soak. The command sets the first five (soak_options in cli/cmd_soak.c); the rest is the
 * hooks' own. */
struct fb_soak {
    double duration, interval, tolerance_pct; /* seconds, seconds, percent */
    int intervals;                            /* ceil(duration / interval) */
    struct fb_soak_rule rule;
    /* rank 0 */
    int size;
    long trials, warmup; /* the most an interval runs: --trials, --warmup */
    bool told;           /* said that an interval cannot hold one point */
    struct fb_soak_point pts[FB_SOAK_MAX_POINTS];
    int npts;
    bool too_many;
    struct fb_soak_series series[FB_SOAK_MAX_POINTS];
    char (*hosts)[64];
    FILE *csv;
    int findings;
};

/* run_mode's prepare hook, before MPI: one benchmark (allreduce at DenseNet-121's gradient bytes
 * by default), batch timing, the trial length from the interval, and a --timeout longer than it.
 * FB_ERR_USAGE with one line in err. */
fb_status fb_soak_prepare(void *arg, struct fb_options *o, char *err, size_t errlen);

/* run_mode's check hook, collective, before the run folder: at most FB_SOAK_MAX_POINTS points in
 * an interval, counted from the benchmark's plan on these ranks (FB_ERR_USAGE, said, when more). */
fb_status fb_soak_check(void *arg, struct fb_session *s, struct fb_options *o);

/* run_mode's work hook, collective: the intervals, soak.csv and health.csv, the verdict line.
 * Returns the exit code (0 healthy, 1 degraded, else fb_status_exit_code's); *worst and
 * `stopped` say what stopped it, for env.json. Frees what the soak held. */
int fb_soak_work(void *arg, const struct fb_run_ctx *ctx, fb_status *worst, char *stopped,
                 size_t stoppedlen);

/* The health side of a soak. Every rank has one; only rank 0 keeps the other ranks' readings
 * and writes health.csv. */
/* One rank's NCCL log as soak reads it, interval after interval: where the last read ended
 * and the events counted so far (fb_nccl_count_events_from). Zeroed: from the start. */
struct fb_soak_nccl {
    long long offset;
    size_t events[FB_NCCL_EVENTS];
    bool warned; /* the log could not be read, and the rank said so */
};

struct fb_soak_health {
    const struct fb_run_ctx *ctx;
    struct fb_soak_nccl nccl;       /* this rank's NCCL log */
    const char (*hosts)[64];        /* rank 0: each rank's host */
    struct fb_telemetry_nvml *nvml; /* this rank's GPU through NVML; NULL when none */
    char gpu[40];                   /* "gpu<N>" or the GPU's PCI address */
    struct fb_health_set *prev;     /* rank 0: the last readings of each rank */
    FILE *csv;                      /* rank 0: health.csv */
    int findings;                   /* rank 0: lines printed */
};

/* Collective: opens NVML where it can (a note says why not), health.csv on rank 0, and takes
 * the readings before the first interval (interval 0). FB_ERR_IO when health.csv cannot be
 * written. */
fb_status fb_soak_health_open(struct fb_soak_health *h, const struct fb_run_ctx *ctx,
                              const char (*hosts)[64]);

/* Collective: every rank reads its counters (sysfs on the first rank of each node only), rank 0
 * gathers them, writes their rows with the change since the last interval to health.csv
 * (flushed and synced) and prints a "degraded" line for each judged counter that moved and
 * each PCIe link newly below its maximum. */
fb_status fb_soak_health_interval(struct fb_soak_health *h, int interval);

void fb_soak_health_close(struct fb_soak_health *h);

/* Rank `rank`'s NCCL faults in its log at `path`, counted by nccllog's classifier as nccl-log's
 * verdict counts them, from where the last call ended (n), added to set as source "nccl",
 * device "rank<N>", counters warn_port_error, warn_fatal_event and warn_device_failed (judged,
 * each the total since the start). A log that is absent counts 0; one that cannot be read adds
 * nothing, with a warning the first time. FB_ERR_NOMEM. */
fb_status fb_soak_nccl_read(struct fb_soak_nccl *n, const char *path, int rank,
                            struct fb_health_set *set);

/* A line of soak's verdict on rank 0's stdout, and in the run's log (fb_out). */
#define FB_SOAK_FINDING(fmt, ...) fb_out("soak: degraded: " fmt "\n", __VA_ARGS__)

#endif
