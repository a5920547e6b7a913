/* The MPI collectives table's all-gather, reduce-scatter, all-to-all, broadcast and reduce
 * (harness/coll/coll.h) under mpirun -np N: every element of every result checked, out of place
 * and in place, at two roots, in int32 and float16, on the host backend (MPI reads the buffers
 * directly) and on host-strict (staged through pinned memory, as device buffers without a
 * CUDA-aware MPI are); and each call's own span (coll.h): stamped whole on host, where MPI's
 * call is all there is, with the table's own copies in it (checked with a copy made slow); not
 * on host-strict, whose copies are part of the call; two calls, or none since the clear, no
 * span. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend.h"
#include "coll.h"
#include "half.h"
#include "mpi_half.h"
#include "test.h"

enum { COUNT = 5 };

static const struct fb_backend *be;
static struct fb_stream *stream;
static struct fb_coll_comm *comm;
static int rank, nranks;

/* What rank r puts in element i of its block b: distinct everywhere, and small enough that
 * every sum is exact in a half (|sum| < 2048 for up to 8 ranks). */
static int value(int r, int b, int i)
{
    return r * 40 + b * 5 + i + 1;
}

static void put(void *dev, const void *host, size_t bytes)
{
    CHECK(be->copy(dev, host, bytes, FB_COPY_H2D, stream) == FB_OK);
    CHECK(be->stream_sync(stream) == FB_OK);
}

static void get(void *host, const void *dev, size_t bytes)
{
    CHECK(be->copy(host, dev, bytes, FB_COPY_D2H, stream) == FB_OK);
    CHECK(be->stream_sync(stream) == FB_OK);
}

/* Element i of a host buffer of dtype as an int, and back. */
static int elem(const void *buf, enum fb_dtype dt, size_t i)
{
    if (dt == FB_DTYPE_FLOAT16)
        return (int)fb_half_to_float(((const uint16_t *)buf)[i]);
    return ((const int32_t *)buf)[i];
}

static void set_elem(void *buf, enum fb_dtype dt, size_t i, int v)
{
    if (dt == FB_DTYPE_FLOAT16)
        ((uint16_t *)buf)[i] = fb_half_from_float((float)v);
    else
        ((int32_t *)buf)[i] = v;
}

/* Fills nblocks blocks of this rank's values into the device buffer dev (block b of the
 * values starting at block `first`). */
static void load(void *dev, enum fb_dtype dt, int first, int nblocks)
{
    size_t es = fb_dtype_size(dt), n = (size_t)nblocks * COUNT;
    unsigned char *h = malloc(n * es);

    for (size_t k = 0; k < n; k++)
        set_elem(h, dt, k, value(rank, first + (int)(k / COUNT), (int)(k % COUNT)));
    put(dev, h, n * es);
    free(h);
}

/* Checks block `at` of dev against want(b, i) for block b = `blk`; names what failed. */
static void expect(const char *what, const void *dev, enum fb_dtype dt, int at, int blk,
                   int (*want)(int b, int i))
{
    size_t es = fb_dtype_size(dt);
    unsigned char *h = malloc(COUNT * es);

    get(h, (const char *)dev + (size_t)at * COUNT * es, COUNT * es);
    for (int i = 0; i < COUNT; i++) {
        if (elem(h, dt, (size_t)i) != want(blk, i))
            fprintf(stderr, "rank %d, %s on %s, %s: block %d element %d is %d, expected %d\n",
                    rank, be->name, dt == FB_DTYPE_FLOAT16 ? "float16" : "int32", what, at, i,
                    elem(h, dt, (size_t)i), want(blk, i));
        CHECK(elem(h, dt, (size_t)i) == want(blk, i));
    }
    free(h);
}

static int g_root;
static int from_block_rank(int b, int i) { return value(b, b, i); }     /* all-gather */
static int to_me(int b, int i) { return value(b, rank, i); }            /* all-to-all */
static int from_root(int b, int i) { (void)b; return value(g_root, 0, i); }
static int sum_block(int b, int i)
{
    int s = 0;
    for (int r = 0; r < nranks; r++)
        s += value(r, b, i);
    return s;
}

/* After one call since fb_call_span_clear: its span is taken on host, not when staged. */
static void expect_span(const char *what)
{
    double us = -1.0;
    bool took = fb_call_span_take(&us);

    if (took != be->host_memory || (took && !(us >= 0.0 && us < 1e7)))
        fprintf(stderr, "rank %d, %s: %s: span %s (%g us), expected %s\n", rank, be->name, what,
                took ? "taken" : "not taken", us, be->host_memory ? "one" : "none");
    CHECK(took == be->host_memory);
    CHECK(!took || (us >= 0.0 && us < 1e7));
}

static void run_ops(const struct fb_coll *coll, enum fb_dtype dt, bool in_place)
{
    size_t blk = COUNT * fb_dtype_size(dt), all = blk * (size_t)nranks;
    void *send = NULL, *recv = NULL, *s;
    const char *how = in_place ? "in place" : "out of place";
    char what[64];

    CHECK(be->alloc(FB_MEM_DEVICE, all, &send) == FB_OK);
    CHECK(be->alloc(FB_MEM_DEVICE, all, &recv) == FB_OK);
    s = in_place ? recv : send;

    /* all-gather: in place, this rank's block is already at block `rank` */
    if (in_place)
        load((char *)recv + (size_t)rank * blk, dt, rank, 1);
    else
        load(send, dt, rank, 1);
    fb_call_span_clear();
    CHECK(coll->allgather(comm, s, recv, COUNT, dt, stream) == FB_OK);
    expect_span("allgather");
    for (int b = 0; b < nranks; b++) {
        snprintf(what, sizeof what, "allgather %s", how);
        expect(what, recv, dt, b, b, from_block_rank);
    }

    /* reduce-scatter: in place, the result lands in block `rank` */
    load(s, dt, 0, nranks);
    fb_call_span_clear();
    CHECK(coll->reduce_scatter(comm, s, recv, COUNT, dt, FB_REDOP_SUM, stream) == FB_OK);
    expect_span("reduce_scatter");
    snprintf(what, sizeof what, "reduce_scatter %s", how);
    expect(what, recv, dt, in_place ? rank : 0, rank, sum_block);

    /* all-to-all: out of place only */
    if (!in_place) {
        load(send, dt, 0, nranks);
        fb_call_span_clear();
        CHECK(coll->alltoall(comm, send, recv, COUNT, dt, stream) == FB_OK);
        expect_span("alltoall");
        for (int b = 0; b < nranks; b++)
            expect("alltoall", recv, dt, b, b, to_me);
    } else {
        CHECK(coll->alltoall(comm, recv, recv, COUNT, dt, stream) == FB_ERR_USAGE);
    }

    for (int root = 0; root < nranks; root += nranks > 1 ? nranks - 1 : 1) {
        g_root = root;
        load(s, dt, 0, 1);
        if (!in_place)
            load(recv, dt, 3, 1); /* stale values that must go */
        fb_call_span_clear();
        CHECK(coll->broadcast(comm, s, recv, COUNT, dt, root, stream) == FB_OK);
        expect_span("broadcast");
        snprintf(what, sizeof what, "broadcast root %d %s", root, how);
        expect(what, recv, dt, 0, 0, from_root);

        load(s, dt, 0, 1);
        fb_call_span_clear();
        CHECK(coll->reduce(comm, s, recv, COUNT, dt, FB_REDOP_SUM, root, stream) == FB_OK);
        expect_span("reduce");
        snprintf(what, sizeof what, "reduce root %d %s", root, how);
        if (rank == root)
            expect(what, recv, dt, 0, 0, sum_block);
        if (nranks == 1)
            break;
    }
    /* all-reduce, the other table call with a span; then two calls: no span */
    load(s, dt, 0, 1);
    fb_call_span_clear();
    CHECK(coll->allreduce(comm, s, recv, COUNT, dt, FB_REDOP_SUM, stream) == FB_OK);
    expect_span("allreduce");
    snprintf(what, sizeof what, "allreduce %s", how);
    expect(what, recv, dt, 0, 0, sum_block);
    {
        double us;
        fb_call_span_clear();
        CHECK(!fb_call_span_take(&us)); /* no call */
        fb_call_span_clear();
        CHECK(coll->allgather(comm, s, recv, COUNT, dt, stream) == FB_OK);
        CHECK(coll->allgather(comm, s, recv, COUNT, dt, stream) == FB_OK);
        CHECK(!fb_call_span_take(&us)); /* two calls */
        CHECK(coll->allgather(comm, s, recv, COUNT, dt, stream) == FB_OK);
        CHECK(!fb_call_span_take(&us)); /* not armed since the take */
    }
    be->free(FB_MEM_DEVICE, send);
    be->free(FB_MEM_DEVICE, recv);
}

/* The host backend with a copy that takes SLOW_US more: the table's own copies (an
 * out-of-place broadcast's at the root, an in-place reduce-scatter's of its result into block
 * `rank`) must then lengthen the call's span by that much. */
enum { SLOW_US = 3000 };
static fb_status slow_copy(void *dst, const void *src, size_t bytes, enum fb_copy dir,
                           struct fb_stream *s)
{
    struct timespec nap = {0, SLOW_US * 1000L};

    while (nanosleep(&nap, &nap) != 0)
        ;
    return fb_backend_find("host")->copy(dst, src, bytes, dir, s);
}

static double span_of(const char *what, fb_status st)
{
    double us = -1.0;

    CHECK(st == FB_OK);
    CHECK(fb_call_span_take(&us));
    if (!(us >= SLOW_US))
        fprintf(stderr, "rank %d: %s spans %g us: its %d us copy is not in it\n", rank, what, us,
                SLOW_US);
    return us;
}

static void span_covers_copies(void)
{
    struct fb_backend slow = *be;
    struct fb_coll_comm *c = NULL;
    void *send = NULL, *recv = NULL;
    size_t blk = COUNT * sizeof(int32_t);

    slow.copy = slow_copy;
    CHECK(fb_coll_mpi.comm_create(MPI_COMM_WORLD, &slow, &c) == FB_OK);
    CHECK(be->alloc(FB_MEM_DEVICE, blk * (size_t)nranks, &send) == FB_OK);
    CHECK(be->alloc(FB_MEM_DEVICE, blk * (size_t)nranks, &recv) == FB_OK);
    if (c && send && recv) {
        g_root = 0;
        load(send, FB_DTYPE_INT32, 0, 1);
        fb_call_span_clear();
        if (rank == 0)
            CHECK(span_of("an out-of-place broadcast at the root",
                          fb_coll_mpi.broadcast(c, send, recv, COUNT, FB_DTYPE_INT32, 0,
                                                stream)) >= SLOW_US);
        else
            CHECK(fb_coll_mpi.broadcast(c, send, recv, COUNT, FB_DTYPE_INT32, 0, stream) ==
                  FB_OK);
        expect("broadcast, slow copy", recv, FB_DTYPE_INT32, 0, 0, from_root);

        load(recv, FB_DTYPE_INT32, 0, nranks);
        fb_call_span_clear();
        if (rank != 0)
            CHECK(span_of("an in-place reduce-scatter off rank 0",
                          fb_coll_mpi.reduce_scatter(c, recv, recv, COUNT, FB_DTYPE_INT32,
                                                     FB_REDOP_SUM, stream)) >= SLOW_US);
        else
            CHECK(fb_coll_mpi.reduce_scatter(c, recv, recv, COUNT, FB_DTYPE_INT32, FB_REDOP_SUM,
                                             stream) == FB_OK);
        expect("reduce_scatter in place, slow copy", recv, FB_DTYPE_INT32, rank, rank,
               sum_block);
    }
    be->free(FB_MEM_DEVICE, send);
    be->free(FB_MEM_DEVICE, recv);
    fb_coll_mpi.comm_destroy(c);
}

static void run_backend(const char *name)
{
    struct fb_device_info info;

    be = fb_backend_find(name);
    CHECK(be != NULL);
    if (!be)
        return;
    fb_backend_scope_case("test_coll_mpi", name);
    CHECK(be->open(-1, &info) == FB_OK);
    CHECK(be->stream_create(&stream) == FB_OK);
    CHECK(fb_coll_mpi.comm_create(MPI_COMM_WORLD, be, &comm) == FB_OK);
    CHECK(fb_coll_mpi.size(comm) == nranks);
    CHECK_STR(fb_coll_mpi.transport(comm), be->host_memory ? "mpi" : "mpi-staged");
    for (int in_place = 0; in_place < 2; in_place++) {
        run_ops(&fb_coll_mpi, FB_DTYPE_INT32, in_place);
        run_ops(&fb_coll_mpi, FB_DTYPE_FLOAT16, in_place);
    }
    if (be->host_memory)
        span_covers_copies();
    fb_coll_mpi.comm_destroy(comm);
    be->stream_destroy(stream);
    be->close();
    fb_backend_scope_case(NULL, NULL);
}

int main(int argc, char **argv)
{
    int failed = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    run_backend("host");
    run_backend("host-strict");
    fb_mpi_half_free();
    MPI_Allreduce(&fb_test_failures, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return failed ? 1 : 0;
}
