/* replay's ops (bench/replay.c): a mix's collectives sized for the ranks that run them, issued
 * through the collectives table, and each one's values checked (bench-private). */
#ifndef FB_REPLAY_OPS_H
#define FB_REPLAY_OPS_H

#include <stddef.h>

#include "bench.h"
#include "mix.h"

/* One op as run: `count` elements per block for all-gather, reduce-scatter and all-to-all
 * (ranks blocks make the larger buffer: count = ceil(elements / ranks), padded as FSDP pads
 * its flat parameters), else elements of the buffer. */
struct fb_replay_op {
    enum fb_mix_coll coll;
    enum fb_dtype dtype;
    size_t count;
    size_t send_elems, recv_elems; /* each rank's buffers */
    size_t bytes;                  /* the larger buffer's bytes (nccl-tests' size) */
    double compute_us;             /* the compute stand-in before it */
    char name[FB_MIX_NAME];
};

/* The mix's ops for `ranks` ranks, each op's bytes times `scale` (at least one element), the
 * compute stand-in `compute_us` where the mix gives none. *out is malloc'ed. FB_ERR_NOMEM;
 * FB_ERR_USAGE (with a message) for an op scaled past 2^50 elements. */
fb_status fb_replay_ops_plan(const struct fb_mix *m, double scale, double compute_us, int ranks,
                             struct fb_replay_op **out);

/* Issues op on `s` through the session's collectives table (stream-ordered where the table
 * is; done on return otherwise), send and recv as large as its send_elems and recv_elems;
 * broadcast and reduce have root 0. Collective. */
fb_status fb_replay_op_issue(const struct fb_ctx *ctx, const struct fb_replay_op *op,
                             const void *send, void *recv, struct fb_stream *s);

/* Fills send with op number i's known values, runs op alone, and counts the wrong elements of
 * recv into *wrong (only root's for reduce). Collective; outside any timing. */
fb_status fb_replay_op_verify(const struct fb_ctx *ctx, size_t i, const struct fb_replay_op *op,
                              void *send, void *recv, struct fb_stream *s, size_t *wrong);

#endif
