/* The NCCL table's all-gather, reduce-scatter, all-to-all, broadcast and reduce
 * (harness/coll/coll_nccl.c) against a fake NCCL (nccl_lib.h) under mpirun -np 2: the calls NCCL
 * gets (buffers, counts, types, root, sum), in place mapped to NCCL's own form (this rank's
 * block), all-to-all through ncclAlltoAll where the library has it and as one group of a send
 * and a receive per peer before 2.28, in place all-to-all refused, and the communicator's size. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "coll.h"
#include "fake_nccl.h"
#include "nccl_lib.h"
#include "test.h"

static int g_token;
static char g_buf[4096]; /* the "device" buffers: only their addresses matter */

/* An address as an offset into g_buf, so the log is the same in every run. */
static long at(const void *p)
{
    return p ? (long)((const char *)p - g_buf) : -1;
}

static ncclResult_t f_init(ncclComm_t *comm, int n, ncclUniqueId id, int rank)
{
    (void)n, (void)id, (void)rank;
    *comm = (ncclComm_t)&g_token;
    return ncclSuccess;
}
static ncclResult_t f_ok(ncclComm_t comm)
{
    (void)comm;
    return ncclSuccess;
}
static ncclResult_t f_send(const void *b, size_t n, ncclDataType_t t, int peer, ncclComm_t comm,
                           cudaStream_t s)
{
    (void)comm, (void)s;
    note("send(%ld,%zu,%d,%d)", at(b), n, (int)t, peer);
    return ncclSuccess;
}
static ncclResult_t f_recv(void *b, size_t n, ncclDataType_t t, int peer, ncclComm_t comm,
                           cudaStream_t s)
{
    (void)comm, (void)s;
    note("recv(%ld,%zu,%d,%d)", at(b), n, (int)t, peer);
    return ncclSuccess;
}
static ncclResult_t f_all_gather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c,
                                 cudaStream_t st)
{
    (void)c, (void)st;
    note("all_gather(%ld,%ld,%zu,%d)", at(s), at(r), n, (int)t);
    return ncclSuccess;
}
static ncclResult_t f_reduce_scatter(const void *s, void *r, size_t n, ncclDataType_t t,
                                     ncclRedOp_t op, ncclComm_t c, cudaStream_t st)
{
    (void)c, (void)st;
    note("reduce_scatter(%ld,%ld,%zu,%d,%s)", at(s), at(r), n, (int)t,
         op == ncclSum ? "sum" : "?");
    return ncclSuccess;
}
static ncclResult_t f_broadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root,
                                ncclComm_t c, cudaStream_t st)
{
    (void)c, (void)st;
    note("broadcast(%ld,%ld,%zu,%d,root %d)", at(s), at(r), n, (int)t, root);
    return ncclSuccess;
}
static ncclResult_t f_reduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
                             int root, ncclComm_t c, cudaStream_t st)
{
    (void)c, (void)st;
    note("reduce(%ld,%ld,%zu,%d,%s,root %d)", at(s), at(r), n, (int)t,
         op == ncclSum ? "sum" : "?", root);
    return ncclSuccess;
}
static ncclResult_t f_all_to_all(const void *s, void *r, size_t n, ncclDataType_t t,
                                 ncclComm_t c, cudaStream_t st)
{
    (void)c, (void)st;
    note("all_to_all(%ld,%ld,%zu,%d)", at(s), at(r), n, (int)t);
    return ncclSuccess;
}

static struct fb_nccl_lib g_fake = {
    FB_FAKE_NCCL_COMMON,
    .comm_init_rank = f_init,
    .comm_finalize = f_ok,
    .comm_destroy = f_ok,
    .comm_abort = f_ok,
    .send = f_send,
    .recv = f_recv,
    .all_gather = f_all_gather,
    .reduce_scatter = f_reduce_scatter,
    .broadcast = f_broadcast,
    .reduce = f_reduce,
    .all_to_all = f_all_to_all,
};

/* Runs `call`, then checks the log it left. */
#define EXPECT_LOG(call, want)                                                              \
    do {                                                                                    \
        g_log[0] = '\0';                                                                    \
        CHECK((call) == FB_OK);                                                             \
        CHECK_STR(g_log, want);                                                             \
    } while (0)

int main(int argc, char **argv)
{
    struct fb_coll_comm *c = NULL;
    const struct fb_coll *t = &fb_coll_nccl;
    char *send = g_buf, *recv = g_buf + 1024, want[512];
    int rank = 0, size = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        fprintf(stderr, "run me under mpirun -np 2\n");
        MPI_Finalize();
        return 77;
    }
    fb_nccl_lib_set(&g_fake);
    CHECK(t->comm_create(MPI_COMM_WORLD, &fb_backend_cuda, &c) == FB_OK);
    if (!c) {
        MPI_Finalize();
        return 1;
    }
    CHECK(t->size(c) == 2);

    /* 10 floats a block (40 bytes): out of place as given */
    snprintf(want, sizeof want, "all_gather(0,1024,10,%d)", (int)ncclFloat32);
    EXPECT_LOG(t->allgather(c, send, recv, 10, FB_DTYPE_FLOAT32, NULL), want);
    /* in place: NCCL's sendbuff is this rank's block of recv */
    snprintf(want, sizeof want, "all_gather(%d,1024,10,%d)", 1024 + 40 * rank, (int)ncclFloat32);
    EXPECT_LOG(t->allgather(c, recv, recv, 10, FB_DTYPE_FLOAT32, NULL), want);

    snprintf(want, sizeof want, "reduce_scatter(0,1024,8,%d,sum)", (int)ncclFloat16);
    EXPECT_LOG(t->reduce_scatter(c, send, recv, 8, FB_DTYPE_FLOAT16, FB_REDOP_SUM, NULL), want);
    /* in place: the result in this rank's block (16 bytes of halves) */
    snprintf(want, sizeof want, "reduce_scatter(1024,%d,8,%d,sum)", 1024 + 16 * rank,
             (int)ncclFloat16);
    EXPECT_LOG(t->reduce_scatter(c, recv, recv, 8, FB_DTYPE_FLOAT16, FB_REDOP_SUM, NULL), want);

    snprintf(want, sizeof want, "all_to_all(0,1024,4,%d)", (int)ncclInt32);
    EXPECT_LOG(t->alltoall(c, send, recv, 4, FB_DTYPE_INT32, NULL), want);
    g_log[0] = '\0';
    CHECK(t->alltoall(c, recv, recv, 4, FB_DTYPE_INT32, NULL) == FB_ERR_USAGE);
    CHECK_STR(g_log, "");

    snprintf(want, sizeof want, "broadcast(0,1024,6,%d,root 1)", (int)ncclFloat64);
    EXPECT_LOG(t->broadcast(c, send, recv, 6, FB_DTYPE_FLOAT64, 1, NULL), want);
    snprintf(want, sizeof want, "reduce(1024,1024,6,%d,sum,root 0)", (int)ncclFloat32);
    EXPECT_LOG(t->reduce(c, recv, recv, 6, FB_DTYPE_FLOAT32, FB_REDOP_SUM, 0, NULL), want);

    /* before NCCL 2.28: one group, block r of send to rank r and block r of recv from it */
    g_fake.all_to_all = NULL;
    snprintf(want, sizeof want,
             "group_start send(0,4,%d,0) recv(1024,4,%d,0) send(16,4,%d,1) recv(1040,4,%d,1) "
             "group_end",
             (int)ncclInt32, (int)ncclInt32, (int)ncclInt32, (int)ncclInt32);
    EXPECT_LOG(t->alltoall(c, send, recv, 4, FB_DTYPE_INT32, NULL), want);

    t->comm_destroy(c);
    MPI_Finalize();
    return fb_test_failures ? 1 : 0;
}
