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
#include "options.h"
#include "session.h"

enum { FB_ALL_RANKS = -1 };

enum fb_needs {
    FB_NEEDS_COLL = 1u << 0, /* the runner creates a collectives communicator first */
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
    int active;          /* FB_ALL_RANKS, or the one rank that runs while the others wait */
    bool per_rank;       /* also report each rank's own figures (concurrent copies) */
    bool collective;     /* report algbw and busbw = algbw * bus_factor (nccl-tests), not bandwidth */
    double bus_factor;
    int variant;         /* the benchmark's own selector */
};

/* What hooks may read. */
struct fb_ctx {
    const struct fb_session *s;
    const struct fb_backend *be;
    const struct fb_options *opt;
    struct fb_coll_comm *coll_comm; /* set when the benchmark needs FB_NEEDS_COLL */
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
};

#endif
