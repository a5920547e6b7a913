/* MPI collectives on backend buffers. Host buffers go to MPI directly; device buffers go
 * directly only when MPI is CUDA-aware, else through pinned host staging buffers. */
#include "coll.h"

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "mpi_half.h"
#include "watchdog.h"

struct fb_coll_comm {
    MPI_Comm comm;
    const struct fb_backend *be;
    bool staged;
    void *stage;       /* pinned host buffer for staged reductions */
    size_t stage_bytes;
    int *counts;       /* reduce-scatter's receive counts, one per rank (all equal) */
    int ncounts;
    bool alone;        /* one rank: a collective is this rank's own work, not a wait for others */
};

bool fb_mpi_cuda_aware(char *why, size_t whylen)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    if (MPIX_Query_cuda_support()) {
        snprintf(why, whylen, "MPIX_Query_cuda_support() says yes");
        return true;
    }
    snprintf(why, whylen, "built with CUDA support, but it is off at run time");
    return false;
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
    snprintf(why, whylen, "this Open MPI was built without CUDA support");
    return false;
#else
    snprintf(why, whylen, "this MPI library gives no way to ask (no MPIX_CUDA_AWARE_SUPPORT)");
    return false;
#endif
}

MPI_Datatype fb_dtype_mpi(enum fb_dtype dtype)
{
    switch (dtype) {
    case FB_DTYPE_FLOAT32: return MPI_FLOAT;
    case FB_DTYPE_FLOAT64: return MPI_DOUBLE;
    case FB_DTYPE_INT32: return MPI_INT32_T;
    case FB_DTYPE_INT8: return MPI_INT8_T;
    case FB_DTYPE_FLOAT16: return fb_mpi_half_type(); /* MPI has none: 2 bytes, our own sum */
    default: return MPI_DATATYPE_NULL;
    }
}

static bool mpi_usable(const struct fb_backend *be, char *why, size_t whylen)
{
    (void)be;
    snprintf(why, whylen, "MPI is always available");
    return true;
}

static int mpi_size(const struct fb_coll_comm *c)
{
    int n = 0;
    MPI_Comm_size(c->comm, &n);
    return n;
}

/* A collective wait begins: this rank has arrived (the watchdog names those that have not). On
 * one rank the call is this rank's own work, which a timeout must not call a wait. */
static void arrived(const struct fb_coll_comm *c)
{
    if (!c->alone)
        fb_watchdog_wait_begin();
}

static fb_status mpi_comm_create(MPI_Comm comm, const struct fb_backend *be,
                                 struct fb_coll_comm **out)
{
    struct fb_coll_comm *c = calloc(1, sizeof *c);
    char why[128];

    *out = NULL;
    if (!c)
        return FB_ERR_NOMEM;
    c->comm = comm;
    c->be = be;
    c->alone = mpi_size(c) == 1; /* asked once, not in every timed call */
    /* Host-backend "device" memory is host memory: MPI can always read it. host-strict's
     * faults on a host access: MPI (never CUDA-aware about it) goes through host memory. */
    c->staged = !be->host_memory && (be->on_cpu || !fb_mpi_cuda_aware(why, sizeof why));
    *out = c;
    return FB_OK;
}

static fb_status mpi_comm_split(struct fb_coll_comm *parent, MPI_Comm sub,
                                struct fb_coll_comm **out)
{
    *out = NULL;
    return sub == MPI_COMM_NULL ? FB_OK : mpi_comm_create(sub, parent->be, out);
}

static void mpi_comm_destroy(struct fb_coll_comm *c)
{
    if (!c)
        return;
    if (c->stage)
        c->be->free(FB_MEM_PINNED, c->stage);
    free(c->counts);
    free(c);
}

static const char *mpi_transport(const struct fb_coll_comm *c)
{
    if (c->be->host_memory)
        return "mpi";
    return c->staged ? "mpi-staged" : "mpi-cuda-aware";
}

static fb_status mpi_check(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (rc == MPI_SUCCESS)
        return FB_OK;
    MPI_Error_string(rc, msg, &len);
    fb_error("%s failed: %s", what, msg);
    return FB_ERR_MPI;
}

static fb_status stage_reserve(struct fb_coll_comm *c, size_t bytes)
{
    fb_status st;

    if (c->stage_bytes >= bytes)
        return FB_OK;
    c->be->free(FB_MEM_PINNED, c->stage);
    c->stage = NULL;
    c->stage_bytes = 0;
    if ((st = c->be->alloc(FB_MEM_PINNED, bytes, &c->stage)) != FB_OK)
        return st;
    c->stage_bytes = bytes;
    return FB_OK;
}

static fb_status mpi_allreduce(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                               enum fb_dtype dtype, enum fb_redop op, struct fb_stream *s)
{
    size_t bytes = count * fb_dtype_size(dtype);
    MPI_Datatype t = fb_dtype_mpi(dtype);
    MPI_Op sum = dtype == FB_DTYPE_FLOAT16 ? fb_mpi_half_sum() : MPI_SUM;
    fb_status st;

    (void)op; /* only FB_REDOP_SUM exists so far */
    if (count > (size_t)INT32_MAX)
        return FB_ERR_UNSUPPORTED;
    if (!c->staged) {
        /* MPI reads device memory itself (host backend or CUDA-aware MPI): wait for the
         * producer on the stream first, since MPI is not stream-ordered. Called even when that
         * failed, so the other ranks are not left in the call (coll.h). */
        fb_status synced = c->be->stream_sync(s);
        int rc;
        arrived(c);
        fb_call_span_begin();
        rc = MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, (int)count, t, sum, c->comm);
        fb_call_span_end(rc == MPI_SUCCESS);
        fb_watchdog_wait_end();
        st = mpi_check(rc, "MPI_Allreduce");
        return synced != FB_OK ? synced : st;
    }
    /* Without a staging buffer there is nothing to call MPI with: the others wait until
     * --timeout names this rank (docs/timeouts.md). */
    if ((st = stage_reserve(c, bytes)) != FB_OK)
        return st;
    fb_status staged = c->be->copy(c->stage, send, bytes, FB_COPY_D2H, s);
    fb_status synced = c->be->stream_sync(s);
    staged = staged != FB_OK ? staged : synced;
    arrived(c);
    fb_call_span_partial(); /* the copies are part of a staged call: its span is not the call's */
    st = mpi_check(MPI_Allreduce(MPI_IN_PLACE, c->stage, (int)count, t, sum, c->comm),
                   "MPI_Allreduce");
    fb_watchdog_wait_end();
    if (staged != FB_OK || st != FB_OK)
        return staged != FB_OK ? staged : st;
    if ((st = c->be->copy(recv, c->stage, bytes, FB_COPY_H2D, s)) != FB_OK)
        return st;
    return c->be->stream_sync(s);
}

/* Device buffers go through the staging buffer in two halves: [0, bytes) out, [bytes, 2 bytes)
 * in. */
static fb_status mpi_sendrecv(struct fb_coll_comm *c, const void *send, int to, void *recv,
                              int from, size_t bytes, struct fb_stream *s)
{
    MPI_Request req[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    const void *out = send;
    void *in = recv;
    fb_status st = FB_OK, mpi;

    if (bytes > (size_t)INT32_MAX)
        return FB_ERR_UNSUPPORTED; /* refused before the run (cmd_run.c): never reached */
    if (c->staged) {
        if ((st = stage_reserve(c, 2 * bytes)) != FB_OK)
            return st; /* nothing is posted: the peer's MPI_Waitall hangs (issue 7's timeouts) */
        out = c->stage;
        in = (char *)c->stage + bytes;
        if (to >= 0)
            st = c->be->copy(c->stage, send, bytes, FB_COPY_D2H, s);
    }
    /* MPI is not stream-ordered: the sender's data must be complete before MPI reads it. */
    if (st == FB_OK && to >= 0)
        st = c->be->stream_sync(s);
    /* One way only (a ping-pong's legs, a one-way stream): MPI's blocking call, as osu_latency
     * makes it. Its eager path sends or matches at once, where a nonblocking call allocates a
     * request and completes it in MPI_Waitall, a cost paid per leg at 8 bytes (not measured
     * apart on the loaded CI VM: docs/methodology.md). Sent even after a failed copy, so the
     * peer is not left waiting. */
    if ((to >= 0) != (from >= 0)) {
        fb_watchdog_wait_begin();
        mpi = to >= 0 ? mpi_check(MPI_Send(out, (int)bytes, MPI_BYTE, to, 0, c->comm), "MPI_Send")
                      : mpi_check(MPI_Recv(in, (int)bytes, MPI_BYTE, from, 0, c->comm,
                                           MPI_STATUS_IGNORE), "MPI_Recv");
        fb_watchdog_wait_end();
        goto received;
    }
    /* The messages are posted even after a failed copy, so the peer is not left waiting. */
    if (from >= 0 && MPI_Irecv(in, (int)bytes, MPI_BYTE, from, 0, c->comm, &req[0]) != MPI_SUCCESS)
        return mpi_check(MPI_ERR_OTHER, "MPI_Irecv");
    if (to >= 0 && (mpi = mpi_check(MPI_Isend(out, (int)bytes, MPI_BYTE, to, 0, c->comm, &req[1]),
                                    "MPI_Isend")) != FB_OK) {
        if (req[0] != MPI_REQUEST_NULL) {
            MPI_Cancel(&req[0]);
            MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        }
        return mpi;
    }
    fb_watchdog_wait_begin();
    mpi = mpi_check(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), "MPI_Waitall");
    fb_watchdog_wait_end();
received:
    if (mpi != FB_OK)
        return mpi;
    if (st == FB_OK && c->staged && from >= 0 &&
        (st = c->be->copy(recv, in, bytes, FB_COPY_H2D, s)) == FB_OK)
        st = c->be->stream_sync(s);
    return st;
}

/* The other collectives. One call of MPI with its arguments, over host-readable buffers. */
enum mpi_kind { K_ALLGATHER, K_REDUCE_SCATTER, K_ALLTOALL, K_BCAST, K_REDUCE };

struct mpi_call {
    enum mpi_kind kind;
    const void *send; /* MPI_IN_PLACE where the call is in place */
    void *recv;
    int count, root;
    const int *counts; /* K_REDUCE_SCATTER: `count` for every rank */
    MPI_Datatype type;
    MPI_Op op;
};

static const char *const kind_names[] = {"MPI_Allgather", "MPI_Reduce_scatter",
                                         "MPI_Alltoall", "MPI_Bcast", "MPI_Reduce"};

static fb_status mpi_call(const struct fb_coll_comm *c, const struct mpi_call *k)
{
    MPI_Comm comm = c->comm;
    int rc = MPI_ERR_OTHER;

    arrived(c);
    fb_call_span_begin();
    switch (k->kind) {
    case K_ALLGATHER:
        rc = MPI_Allgather(k->send, k->count, k->type, k->recv, k->count, k->type, comm);
        break;
    case K_REDUCE_SCATTER:
        rc = MPI_Reduce_scatter(k->send, k->recv, k->counts, k->type, k->op, comm);
        break;
    case K_ALLTOALL:
        rc = MPI_Alltoall(k->send, k->count, k->type, k->recv, k->count, k->type, comm);
        break;
    case K_BCAST:
        rc = MPI_Bcast(k->recv, k->count, k->type, k->root, comm);
        break;
    case K_REDUCE:
        rc = MPI_Reduce(k->send, k->recv, k->count, k->type, k->op, k->root, comm);
        break;
    }
    fb_call_span_end(rc == MPI_SUCCESS);
    fb_watchdog_wait_end();
    return mpi_check(rc, kind_names[k->kind]);
}

/* One collective of this rank: `in` (inb bytes) is its input, `out` (outb bytes, 0 for none)
 * where its result goes, both backend buffers; k says the call on buffers MPI can read (the
 * in-place form included). Staged: the input is copied to the staging buffer's first inb
 * bytes, MPI runs out of place into the bytes after them, and the result is copied out. */
static fb_status mpi_run(struct fb_coll_comm *c, struct mpi_call k, const void *in, size_t inb,
                         void *out, size_t outb, struct fb_stream *s)
{
    fb_status st, before;
    char *stage;

    if (!c->staged) {
        /* MPI reads backend memory itself: wait for the producer on the stream first (the call
         * is made even when that failed, as below) */
        before = c->be->stream_sync(s);
        st = mpi_call(c, &k);
        return before != FB_OK ? before : st;
    }
    /* without a staging buffer there is nothing to call MPI with (mpi_allreduce) */
    if ((st = stage_reserve(c, inb + outb)) != FB_OK)
        return st;
    stage = c->stage;
    /* A failed copy in still makes the call, so the other ranks are not left in it (coll.h);
     * the first failure is returned after. */
    before = inb ? c->be->copy(stage, in, inb, FB_COPY_D2H, s) : FB_OK;
    st = c->be->stream_sync(s);
    before = before != FB_OK ? before : st;
    k.send = stage;
    k.recv = k.kind == K_BCAST ? stage : stage + inb;
    fb_call_span_partial(); /* the copies are part of a staged call */
    st = mpi_call(c, &k);
    if (before != FB_OK || st != FB_OK || !outb)
        return before != FB_OK ? before : st;
    if ((st = c->be->copy(out, k.recv, outb, FB_COPY_H2D, s)) != FB_OK)
        return st;
    return c->be->stream_sync(s);
}

/* The MPI call's common arguments; FB_ERR_UNSUPPORTED where a count passes MPI's int. */
static fb_status mpi_prepare(size_t count, size_t blocks, enum fb_dtype dtype, enum mpi_kind kind,
                             struct mpi_call *k)
{
    if (count > (size_t)INT32_MAX || (blocks && count > SIZE_MAX / blocks / 8))
        return FB_ERR_UNSUPPORTED;
    *k = (struct mpi_call){.kind = kind, .count = (int)count, .type = fb_dtype_mpi(dtype),
                           .op = dtype == FB_DTYPE_FLOAT16 ? fb_mpi_half_sum() : MPI_SUM};
    return FB_OK;
}

static fb_status mpi_allgather(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                               enum fb_dtype dtype, struct fb_stream *s)
{
    size_t blk = count * fb_dtype_size(dtype);
    int n = mpi_size(c), rank = 0;
    struct mpi_call k;
    fb_status st;

    if ((st = mpi_prepare(count, (size_t)n, dtype, K_ALLGATHER, &k)) != FB_OK)
        return st;
    MPI_Comm_rank(c->comm, &rank);
    k.send = send == recv ? MPI_IN_PLACE : send;
    k.recv = recv;
    if (send == recv)
        send = (char *)recv + (size_t)rank * blk;
    return mpi_run(c, k, send, blk, recv, (size_t)n * blk, s);
}

static fb_status mpi_reduce_scatter(struct fb_coll_comm *c, const void *send, void *recv,
                                    size_t count, enum fb_dtype dtype, enum fb_redop op,
                                    struct fb_stream *s)
{
    size_t blk = count * fb_dtype_size(dtype);
    int n = mpi_size(c), rank = 0;
    bool in_place = send == recv;
    struct mpi_call k;
    fb_status st;
    char *mine;

    (void)op; /* only FB_REDOP_SUM exists so far */
    if ((st = mpi_prepare(count, (size_t)n, dtype, K_REDUCE_SCATTER, &k)) != FB_OK)
        return st;
    MPI_Comm_rank(c->comm, &rank);
    /* MPI_Reduce_scatter with equal counts, not MPI_Reduce_scatter_block: Open MPI 4.1 has no
     * tuned algorithm for the latter (measured 2026-12-01 on the 2-core CI VM: 2 ms against
     * 33 us at 256 KiB on 2 ranks), and OSU's osu_reduce_scatter calls the former
     * (docs/benchmarks/collectives.md). */
    if (c->ncounts != n) {
        free(c->counts);
        c->ncounts = 0;
        if (!(c->counts = malloc((size_t)n * sizeof *c->counts)))
            return FB_ERR_NOMEM;
        c->ncounts = n;
    }
    for (int r = 0; r < n; r++)
        c->counts[r] = (int)count;
    k.counts = c->counts;
    mine = (char *)recv + (in_place ? (size_t)rank * blk : 0);
    k.send = in_place ? MPI_IN_PLACE : send;
    k.recv = recv;
    if (c->staged || !in_place)
        return mpi_run(c, k, send, (size_t)n * blk, mine, blk, s);
    /* MPI's in place leaves the result in block 0; NCCL's (and ours) in block `rank`. */
    if ((st = mpi_run(c, k, send, 0, NULL, 0, s)) != FB_OK || rank == 0)
        return st;
    if ((st = c->be->copy(mine, recv, blk, FB_COPY_D2D, s)) != FB_OK ||
        (st = c->be->stream_sync(s)) != FB_OK) {
        fb_call_span_partial();
        return st;
    }
    fb_call_span_end(true); /* the copy is part of the call: its span ends after it */
    return FB_OK;
}

static fb_status mpi_alltoall(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                              enum fb_dtype dtype, struct fb_stream *s)
{
    size_t blk = count * fb_dtype_size(dtype);
    int n = mpi_size(c);
    struct mpi_call k;
    fb_status st;

    if (send == recv)
        return FB_ERR_USAGE; /* NCCL has no in-place all-to-all: neither table offers one */
    if ((st = mpi_prepare(count, (size_t)n, dtype, K_ALLTOALL, &k)) != FB_OK)
        return st;
    k.send = send;
    k.recv = recv;
    return mpi_run(c, k, send, (size_t)n * blk, recv, (size_t)n * blk, s);
}

static fb_status mpi_broadcast(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                               enum fb_dtype dtype, int root, struct fb_stream *s)
{
    size_t blk = count * fb_dtype_size(dtype);
    int rank = 0;
    struct mpi_call k;
    fb_status st;

    if ((st = mpi_prepare(count, 1, dtype, K_BCAST, &k)) != FB_OK)
        return st;
    MPI_Comm_rank(c->comm, &rank);
    k.root = root;
    k.recv = recv;
    if (c->staged)
        return mpi_run(c, k, send, rank == root ? blk : 0, recv, blk, s);
    /* MPI_Bcast has one buffer: out of place, the root's data is copied into it first, a part
     * of the call and of its span */
    if (rank == root && send != recv) {
        double begin = fb_call_span_now();
        /* the broadcast is made even after a failed copy: the others wait in it */
        fb_status copied = c->be->copy(recv, send, blk, FB_COPY_D2D, s);
        st = mpi_run(c, k, NULL, 0, NULL, 0, s);
        if (copied != FB_OK || st != FB_OK) {
            fb_call_span_partial();
            return copied != FB_OK ? copied : st;
        }
        fb_call_span_widen(begin);
        return FB_OK;
    }
    return mpi_run(c, k, NULL, 0, NULL, 0, s);
}

static fb_status mpi_reduce(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                            enum fb_dtype dtype, enum fb_redop op, int root, struct fb_stream *s)
{
    size_t blk = count * fb_dtype_size(dtype);
    int rank = 0;
    struct mpi_call k;
    fb_status st;

    (void)op;
    if ((st = mpi_prepare(count, 1, dtype, K_REDUCE, &k)) != FB_OK)
        return st;
    MPI_Comm_rank(c->comm, &rank);
    k.root = root;
    k.send = rank == root && send == recv ? MPI_IN_PLACE : send;
    k.recv = rank == root ? recv : NULL;
    return mpi_run(c, k, send, blk, rank == root ? recv : NULL, rank == root ? blk : 0, s);
}

const struct fb_coll fb_coll_mpi = {
    .name = "mpi",
    .built = true,
    .stream_ordered = false,
    .usable = mpi_usable,
    .comm_create = mpi_comm_create,
    .comm_destroy = mpi_comm_destroy,
    .comm_split = mpi_comm_split,
    .transport = mpi_transport,
    .allreduce = mpi_allreduce,
    .sendrecv = mpi_sendrecv,
    .size = mpi_size,
    .allgather = mpi_allgather,
    .reduce_scatter = mpi_reduce_scatter,
    .alltoall = mpi_alltoall,
    .broadcast = mpi_broadcast,
    .reduce = mpi_reduce,
};
