/* What a benchmark is: a constant table of hooks the runner calls. A benchmark plans its
 * measurement points (cases), sets one up, enqueues one iteration, verifies, and tears down. It
 * never parses options, times itself, prints results or calls MPI_Init: the runner owns
 * warm-up, trials, statistics, the cross-rank reduction, verification and output. */
#ifndef FB_BENCH_H
#define FB_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"
#include "coll.h"
#include "links.h"
#include "options.h"
#include "results.h"
#include "session.h"

enum { FB_ALL_RANKS = -1 };

enum fb_needs {
    FB_NEEDS_COLL = 1u << 0,  /* the runner creates a collectives communicator first */
    FB_SCALES = 1u << 1,      /* run once per rank count k, on the first k ranks (--ranks) */
    FB_NEEDS_LINKS = 1u << 2, /* rows about a pair of ranks carry the pair's link label */
    FB_REPORTS_VALUES = 1u << 3, /* not timed: setup finds figures (a batch that fits, ...)
                                    and the `values` hook reports them */
    FB_ONE_CALL = 1u << 4, /* an iteration is one call of the collectives table and nothing
                              else: --timing synced times the call's own span (coll.h) */
    FB_NEEDS_MEMCPY_REF = 1u << 5, /* on a CPU backend its rows are memory copies: the
                                      expected-figure model calibrates memcpy before the run
                                      (fb_expect_job_calibrate) */
};

/* A figure a FB_REPORTS_VALUES benchmark found: one row with one sample. */
enum { FB_MAX_VALUES = 8 };
struct fb_value {
    char metric[24];
    char unit[12];
    double value;
};

/* What a case's rows say besides its time per iteration. */
enum fb_report {
    FB_REPORT_BANDWIDTH,  /* bandwidth (or bandwidth_total and per-rank rows) in GB/s */
    FB_REPORT_COLLECTIVE, /* algbw and busbw = algbw * bus_factor, as nccl-tests defines them */
    FB_REPORT_LATENCY,    /* latency = time per iteration / legs, in microseconds */
    FB_REPORT_THROUGHPUT, /* work done per second: images/s (items), TFLOP/s (flops), GB/s
                             (bytes, when not 0), and the stall fraction (busy_us) */
};

/* One measurement point. Identical on every rank (plans are computed from the same inputs). */
struct fb_case {
    char name[48];       /* the CSV `case` column: "pinned_h2d", "out_of_place", ... */
    char transport[24];  /* the CSV `transport` column */
    size_t bytes;        /* bytes each active rank moves per iteration (the bandwidth numerator) */
    size_t count;        /* elements, when typed; 0 otherwise */
    enum fb_dtype dtype;
    bool typed;          /* count and dtype apply */
    const char *redop;   /* "sum", or NULL when not a reduction */
    int active;          /* FB_ALL_RANKS (every rank of the group), or the one rank that runs */
    bool pair;           /* with one active rank: `peer` runs too */
    int peer;            /* the other rank of a pair */
    int stride;          /* with a pair, > 0: the pair repeats every `stride` ranks (active + j *
                            stride with peer + j * stride, active and peer below stride), all at
                            once, each with its own rows; 0: once */
    int shift;           /* all ranks at once, per_rank: rank k's partner is (k + shift) % ranks */
    const int *partners; /* with active == FB_ALL_RANKS, non-NULL: disjoint pairs at once, rank
                            k with partners[k] (symmetric; -1: k sits the case out). Owned by
                            the benchmark's options (fb_options.pairings), never freed here */
    bool per_rank;       /* also report each rank's own figures (concurrent copies) */
    bool detail;         /* a cell of a matrix the benchmark summarizes: not a headline */
    enum fb_report report;
    double bus_factor;   /* FB_REPORT_COLLECTIVE */
    bool rooted;         /* FB_REPORT_COLLECTIVE: `root` applies (broadcast, reduce); else the
                            table's root column says -1, as nccl-tests' */
    int root;
    int legs;            /* FB_REPORT_LATENCY: one-way trips per iteration (a ping-pong has 2) */
    int group;           /* set by the runner: the case runs on ranks 0..group-1 */
    int variant;         /* the benchmark's own selector */
    long aux;            /* the benchmark's own number (a fusion threshold, ...) */
    /* FB_REPORT_THROUGHPUT: what one iteration of one active rank does. */
    long batch;          /* the CSV `batch` column; 0 when not about a batch */
    double items;        /* images per iteration: reports images_per_s; 0 = none */
    double flops;        /* floating-point operations per iteration: reports tflops; 0 = none */
    double work_flops;   /* floating-point operations per iteration that are not reported
                            (`flops` aside): a dry run's floor only (run_plan.h) */
    double busy_us;      /* known work per iteration (a consumer's compute): reports
                            stall_fraction = 1 - busy_us / time; 0 = none */
    bool bytes_label;    /* `bytes` labels the point (a fusion threshold) and is not moved per
                            iteration: no bandwidth row */
    long min_iters;      /* calibrated iterations per trial at least (0: no minimum): for work
                            that runs ahead of its iterations (worker threads filling a ring),
                            whose trial may begin with work done between trials; with n
                            iterations that head start is at most about 1/n of a trial */
};

/* What hooks may read. */
struct fb_ctx {
    const struct fb_session *s;
    const struct fb_backend *be;
    const struct fb_options *opt;
    int ranks;                      /* the group: the first `ranks` ranks of the world */
    MPI_Comm comm;                  /* the group's communicator; MPI_COMM_NULL outside it */
    struct fb_coll_comm *coll_comm; /* the group's collectives (FB_NEEDS_COLL); NULL outside */
    struct fb_coll_comm *world_coll; /* collectives over the whole world (FB_NEEDS_COLL) */
    const int *node_of;              /* world rank -> node index */
    /* For summarize, rank 0, FB_NEEDS_LINKS: links[src * size + dst] and "host gpu" names. */
    const char (*links)[FB_LINK_LABEL];
    const char (*rank_names)[FB_RANK_NAME];
};

struct fb_bench {
    const char *name;    /* short snake_case noun: the CSV `bench` column and the doc page */
    const char *summary; /* one line for `fabricbench list` */
    unsigned needs;      /* enum fb_needs bits */
    int min_ranks;
    /* Lists the cases into a malloc'ed array (the runner frees it). Same result on all ranks. */
    fb_status (*plan)(const struct fb_ctx *ctx, struct fb_case **cases, size_t *ncases);
    /* On the ranks that take part: allocate and fill buffers; work goes on `stream`. */
    fb_status (*setup)(const struct fb_ctx *ctx, const struct fb_case *c, struct fb_stream *stream,
                       void **state);
    /* Enqueue one iteration on the setup stream. Not timed by itself. */
    fb_status (*iterate)(void *state);
    /* After timing: refill, run one iteration, wait, and count the wrong elements. */
    fb_status (*verify)(void *state, size_t *wrong);
    void (*teardown)(void *state); /* accepts NULL */
    /* Optional, rank 0 only, after the last case: a view over this benchmark's rows
     * (rows[first..res->nrows)), such as a rank x rank matrix; it may add derived rows
     * (the runner flushes them). */
    void (*summarize)(const struct fb_ctx *ctx, struct fb_results *res, size_t first);
    /* FB_REPORTS_VALUES, on the active ranks after setup (iterate is never called): up to
     * FB_MAX_VALUES figures, the same metrics in the same order on every rank. */
    fb_status (*values)(void *state, struct fb_value *out, size_t *n);
    /* Optional, on the active ranks after each timed trial of `iters` iterations (outside its
     * timing): up to FB_MAX_VALUES figures about that trial (a training step's phases, the
     * means over its last `iters` iterations), the same metrics in the same order on every
     * rank. The runner reports each
     * as a row with statistics over the trials, taking in each trial the figures of the rank
     * whose time set the trial (the slowest), so they describe the same iterations as `time`.
     * The metric names are rank 0's: rank 0 must take part in the case. */
    fb_status (*trial_values)(void *state, long iters, struct fb_value *out, size_t *n);
};

#endif
