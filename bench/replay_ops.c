/* replay's ops: sized for the ranks, issued through the collectives table, verified with the
 * patterns of kernels/pattern.h (each block its own seed, so a block in the wrong place is
 * caught). */
#include "replay_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

static bool sharded(enum fb_mix_coll c)
{
    return c == FB_MIX_ALLGATHER || c == FB_MIX_REDUCE_SCATTER || c == FB_MIX_ALLTOALL;
}

fb_status fb_replay_ops_plan(const struct fb_mix *m, double scale, double compute_us, int ranks,
                             struct fb_replay_op **out)
{
    struct fb_replay_op *ops = calloc(m->nops ? m->nops : 1, sizeof *ops);
    size_t n = (size_t)ranks;

    *out = NULL;
    if (!ops)
        return FB_ERR_NOMEM;
    for (size_t i = 0; i < m->nops; i++) {
        const struct fb_mix_op *mo = &m->ops[i];
        struct fb_replay_op *o = &ops[i];
        size_t esize = fb_dtype_size(mo->dtype);
        double el = floor((double)(mo->bytes / esize) * scale);
        size_t elements = el < 1.0 ? 1 : (size_t)el;

        /* 2^50 elements: far beyond any memory, and far from size_t's end after the padding */
        if (el > 1125899906842624.0) {
            fb_error("replay: op %zu (%s) at --scale %g is %.3g elements, more than any memory",
                     i, mo->name, scale, el);
            free(ops);
            return FB_ERR_USAGE;
        }

        o->coll = mo->coll;
        o->dtype = mo->dtype;
        o->compute_us = mo->compute_us > 0.0 ? mo->compute_us : compute_us;
        snprintf(o->name, sizeof o->name, "%s", mo->name);
        if (sharded(mo->coll)) {
            o->count = (elements + n - 1) / n;
            o->send_elems = mo->coll == FB_MIX_ALLGATHER ? o->count : o->count * n;
            o->recv_elems = mo->coll == FB_MIX_REDUCE_SCATTER ? o->count : o->count * n;
            o->bytes = o->count * n * esize;
        } else {
            o->count = o->send_elems = o->recv_elems = elements;
            o->bytes = elements * esize;
        }
    }
    *out = ops;
    return FB_OK;
}

fb_status fb_replay_op_issue(const struct fb_ctx *ctx, const struct fb_replay_op *op,
                             const void *send, void *recv, struct fb_stream *s)
{
    const struct fb_coll *coll = ctx->s->coll;
    struct fb_coll_comm *c = ctx->coll_comm;

    switch (op->coll) {
    case FB_MIX_ALLREDUCE:
        return coll->allreduce(c, send, recv, op->count, op->dtype, FB_REDOP_SUM, s);
    case FB_MIX_ALLGATHER: return coll->allgather(c, send, recv, op->count, op->dtype, s);
    case FB_MIX_REDUCE_SCATTER:
        return coll->reduce_scatter(c, send, recv, op->count, op->dtype, FB_REDOP_SUM, s);
    case FB_MIX_ALLTOALL: return coll->alltoall(c, send, recv, op->count, op->dtype, s);
    case FB_MIX_BROADCAST: return coll->broadcast(c, send, recv, op->count, op->dtype, 0, s);
    case FB_MIX_REDUCE:
        return coll->reduce(c, send, recv, op->count, op->dtype, FB_REDOP_SUM, 0, s);
    default: return FB_ERR_INTERNAL;
    }
}

static struct fb_pattern pat(uint32_t seed, int scale, int64_t offset)
{
    return (struct fb_pattern){.seed = seed, .scale = scale, .offset = offset};
}

fb_status fb_replay_op_verify(const struct fb_ctx *ctx, size_t i, const struct fb_replay_op *op,
                              void *send, void *recv, struct fb_stream *s, size_t *wrong)
{
    const struct fb_backend *be = ctx->be;
    int me = ctx->s->world.rank, n = ctx->ranks;
    size_t esize = fb_dtype_size(op->dtype), w = 0;
    uint32_t seed = 1000u + (uint32_t)i * 7919u;
    int64_t offsets = 0;
    fb_status st = FB_OK;

    *wrong = 0;
    for (int r = 0; r < n; r++)
        offsets += fb_pattern_rank_offset(r);
    /* the sender's data: one pattern per block, seeded by who sends it and where it goes */
    switch (op->coll) {
    case FB_MIX_ALLGATHER:
        st = be->fill(send, op->count, op->dtype,
                      pat(seed + (uint32_t)me, 1, fb_pattern_rank_offset(me)), s);
        break;
    case FB_MIX_REDUCE_SCATTER:
    case FB_MIX_ALLTOALL:
        for (int b = 0; b < n && st == FB_OK; b++) {
            uint32_t sd = op->coll == FB_MIX_ALLTOALL ? seed + (uint32_t)(me * n + b)
                                                      : seed + (uint32_t)b;
            st = be->fill((char *)send + (size_t)b * op->count * esize, op->count, op->dtype,
                          pat(sd, 1, fb_pattern_rank_offset(me)), s);
        }
        break;
    default:
        st = be->fill(send, op->count, op->dtype, pat(seed, 1, fb_pattern_rank_offset(me)), s);
    }
    /* a poison in recv: what the op does not write is caught */
    if (st == FB_OK)
        st = be->fill(recv, op->recv_elems, op->dtype, pat(seed, 0, 99), s);
    if (st == FB_OK)
        st = fb_replay_op_issue(ctx, op, send, recv, s);
    if (st == FB_OK)
        st = be->stream_sync(s);
    if (st != FB_OK)
        return st;
    switch (op->coll) {
    case FB_MIX_ALLREDUCE:
        return be->check(recv, op->count, op->dtype, pat(seed, n, offsets), wrong, s);
    case FB_MIX_REDUCE:
        return me == 0 ? be->check(recv, op->count, op->dtype, pat(seed, n, offsets), wrong, s)
                       : FB_OK;
    case FB_MIX_BROADCAST:
        return be->check(recv, op->count, op->dtype, pat(seed, 1, fb_pattern_rank_offset(0)),
                         wrong, s);
    case FB_MIX_REDUCE_SCATTER:
        return be->check(recv, op->count, op->dtype, pat(seed + (uint32_t)me, n, offsets),
                         wrong, s);
    case FB_MIX_ALLGATHER:
    case FB_MIX_ALLTOALL:
        for (int r = 0; r < n && st == FB_OK; r++) {
            uint32_t sd = op->coll == FB_MIX_ALLTOALL ? seed + (uint32_t)(r * n + me)
                                                      : seed + (uint32_t)r;
            st = be->check((char *)recv + (size_t)r * op->count * esize, op->count, op->dtype,
                           pat(sd, 1, fb_pattern_rank_offset(r)), &w, s);
            *wrong += w;
        }
        return st;
    default: return FB_ERR_INTERNAL;
    }
}
