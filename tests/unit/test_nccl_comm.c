/* The NCCL communicator's life (harness/coll/coll_nccl.c) against a fake NCCL table
 * (nccl_lib.h), on one MPI rank: communicators are blocking (ncclCommInitRankConfig with
 * blocking = 1 where NCCL has it, whatever NCCL_COMM_BLOCKING says; ncclCommInitRank before
 * 2.14; a split that inherits it), a destroy finalizes before it destroys, the watchdog's abort happens once and
 * leaves nothing for destroy to do, and a failed send still ends its group. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "fake_nccl.h"
#include "nccl_lib.h"
#include "test.h"

static int g_token[2];
static ncclResult_t g_send_rc;

static ncclResult_t f_init(ncclComm_t *comm, int n, ncclUniqueId id, int rank)
{
    (void)n, (void)id, (void)rank;
    *comm = (ncclComm_t)&g_token[0];
    note("init");
    return ncclSuccess;
}
static int g_blocking = -100; /* the configuration's blocking field, as last given */
static ncclResult_t f_init_config(ncclComm_t *comm, int n, ncclUniqueId id, int rank,
                                  ncclConfig_t *config)
{
    g_blocking = config ? config->blocking : -200;
    return f_init(comm, n, id, rank);
}
static ncclResult_t f_split(ncclComm_t comm, int color, int key, ncclComm_t *out, void *config)
{
    (void)comm, (void)key;
    *out = color >= 0 ? (ncclComm_t)&g_token[1] : NULL;
    note(config ? "split(config)" : "split");
    return ncclSuccess;
}
static ncclResult_t f_finalize(ncclComm_t comm)
{
    note(comm == (ncclComm_t)&g_token[1] ? "finalize(child)" : "finalize");
    return ncclSuccess;
}
static ncclResult_t f_destroy(ncclComm_t comm)
{
    note(comm == (ncclComm_t)&g_token[1] ? "destroy(child)" : "destroy");
    return ncclSuccess;
}
static ncclResult_t f_abort(ncclComm_t comm)
{
    note(comm ? "abort" : "abort(NULL)");
    return ncclSuccess;
}
static ncclResult_t f_send(const void *b, size_t n, ncclDataType_t t, int peer, ncclComm_t comm,
                           cudaStream_t s)
{
    (void)b, (void)n, (void)t, (void)peer, (void)comm, (void)s;
    note("send");
    return g_send_rc;
}
static ncclResult_t f_recv(void *b, size_t n, ncclDataType_t t, int peer, ncclComm_t comm,
                           cudaStream_t s)
{
    (void)b, (void)n, (void)t, (void)peer, (void)comm, (void)s;
    note("recv");
    return ncclSuccess;
}

static struct fb_nccl_lib g_fake = {
    FB_FAKE_NCCL_COMMON,
    .comm_init_rank = f_init,
    .comm_split = f_split,
    .comm_finalize = f_finalize,
    .comm_destroy = f_destroy,
    .comm_abort = f_abort,
    .send = f_send,
    .recv = f_recv,
};

static struct fb_coll_comm *create(void)
{
    struct fb_coll_comm *c = NULL;

    g_log[0] = '\0';
    CHECK(fb_coll_nccl.comm_create(MPI_COMM_WORLD, &fb_backend_cuda, &c) == FB_OK);
    CHECK(c != NULL);
    return c;
}

int main(int argc, char **argv)
{
    struct fb_coll_comm *c, *child = NULL;
    char why[256];
    int b1 = 1, b2 = 2;

    MPI_Init(&argc, &argv);
    fb_nccl_lib_set(&g_fake);
    CHECK(fb_nccl_version_code() == 22809);
    CHECK(!fb_coll_nccl.usable(&fb_backend_host, why, sizeof why));
    CHECK_HAS(why, "backend 'host' has none");

    /* a plain life: a blocking init, then finalize before destroy */
    if ((c = create())) {
        fb_coll_nccl.comm_destroy(c);
        CHECK_STR(g_log, "init finalize destroy");
    }

    /* NCCL 2.14 and later: the communicator is made with a configuration that says blocking,
     * so NCCL_COMM_BLOCKING=0 in the environment cannot make it non-blocking (issue 29) */
    setenv("NCCL_COMM_BLOCKING", "0", 1);
    g_fake.comm_init_rank_config = f_init_config;
    if ((c = create())) {
        CHECK(g_blocking == 1);
        fb_coll_nccl.comm_destroy(c);
        CHECK_STR(g_log, "init finalize destroy");
    }
    g_fake.comm_init_rank_config = NULL;
    unsetenv("NCCL_COMM_BLOCKING");

    /* the watchdog stops the job: one abort however often it is asked, then nothing more */
    if ((c = create())) {
        fb_coll_nccl_abort(c);
        fb_coll_nccl_abort(c);
        fb_coll_nccl.comm_destroy(c);
        CHECK_STR(g_log, "init abort");
    }

    /* a split inherits the parent's (blocking) configuration and ends like any other */
    if ((c = create())) {
        CHECK(fb_coll_nccl.comm_split(c, MPI_COMM_WORLD, &child) == FB_OK && child);
        fb_coll_nccl.comm_destroy(child);
        fb_coll_nccl.comm_destroy(c);
        CHECK_STR(g_log, "init split finalize(child) destroy(child) finalize destroy");
    }

    /* a failed send still ends its group, and the send's error is the one reported */
    if ((c = create())) {
        g_log[0] = '\0';
        g_send_rc = ncclInternalError;
        CHECK(fb_coll_nccl.sendrecv(c, &b1, 0, &b2, 0, sizeof b1, NULL) == FB_ERR_NCCL);
        CHECK_STR(g_log, "group_start send group_end");
        /* and a group that fails only at its end says so */
        g_log[0] = '\0';
        g_send_rc = ncclSuccess;
        g_group_end_rc = ncclUnhandledCudaError;
        CHECK(fb_coll_nccl.sendrecv(c, &b1, 0, &b2, 0, sizeof b1, NULL) == FB_ERR_NCCL);
        CHECK_STR(g_log, "group_start send recv group_end");
        g_group_end_rc = ncclSuccess;
        fb_coll_nccl.comm_destroy(c);
    }
    MPI_Finalize();
    TEST_DONE();
}
