/* NCCL collectives on GPU buffers. The unique id travels over MPI; NCCL does the rest.
 * Builds against NCCL 2.12 and newer; later features are tested with NCCL_VERSION_CODE.
 * From NCCL 2.14 communicators are non-blocking (config.blocking = 0): creation and every call
 * that answers ncclInProgress are polled against --timeout, and each communicator is handed to
 * the watchdog, which polls its asynchronous error and aborts it when the job is stopped. */
#define _POSIX_C_SOURCE 200809L
#include "coll.h"

#include <nccl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "nccl_lib.h"
#include "watchdog.h"

#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 14, 0)
#define FB_NCCL_NONBLOCKING 1
#else
#define FB_NCCL_NONBLOCKING 0
#endif

struct fb_coll_comm {
    ncclComm_t comm;
    int rank;
};

/* The loaded library; every call below runs after nccl_usable has loaded it. */
#define L fb_nccl_lib_get(NULL, 0)

int fb_nccl_version_code(void)
{
    const struct fb_nccl_lib *lib = fb_nccl_lib_get(NULL, 0);
    return lib ? lib->version : 0;
}

static fb_status nccl_check(ncclResult_t rc, const char *what)
{
    if (rc == ncclSuccess)
        return FB_OK;
    fb_error("%s failed: %s", what, L->get_error_string(rc));
    return FB_ERR_NCCL;
}

/* Waits until the operation `what` on comm leaves ncclInProgress (a non-blocking communicator
 * answers so while it works), polling ncclCommGetAsyncError: spinning for the first
 * millisecond, so a collective's enqueue is not slowed down, then in naps of 100 us. Past the
 * phase's deadline the communicator is aborted and the watchdog stops the job (no return). */
static fb_status nccl_settle(ncclComm_t comm, ncclResult_t rc, const char *what)
{
#if FB_NCCL_NONBLOCKING
    struct timespec nap = {0, 100 * 1000};
    long spins = 0;

    if (rc != ncclInProgress || !comm)
        return nccl_check(rc, what);
    fb_watchdog_wait_begin();
    while (rc == ncclInProgress) {
        if (fb_watchdog_expired()) {
            (void)L->comm_abort(comm);
            fb_watchdog_expire(what);
        }
        if (spins++ < 1000)
            sched_yield();
        else
            nanosleep(&nap, NULL);
        if (L->comm_get_async_error(comm, &rc) != ncclSuccess)
            break;
    }
    fb_watchdog_wait_end();
#else
    (void)comm;
#endif
    return nccl_check(rc, what);
}

/* The watchdog's side (another thread): a failed communicator, and the abort on a stop. */
static bool guard_failed(void *arg, char *why, size_t len)
{
    struct fb_coll_comm *c = arg;
    ncclResult_t state = ncclSuccess;

    if (L->comm_get_async_error(c->comm, &state) != ncclSuccess || state == ncclSuccess
#if FB_NCCL_NONBLOCKING
        || state == ncclInProgress
#endif
    )
        return false;
    snprintf(why, len, "NCCL communicator of rank %d failed: %s", c->rank,
             L->get_error_string(state));
    return true;
}

static void guard_abort(void *arg)
{
    struct fb_coll_comm *c = arg;
    (void)L->comm_abort(c->comm);
}

void fb_coll_nccl_abort(struct fb_coll_comm *c)
{
    guard_abort(c);
}

static void guard(struct fb_coll_comm *c)
{
    if (!fb_watchdog_guard(guard_abort, guard_failed, c))
        fb_warn("NCCL communicator of rank %d not watched (too many); --timeout still stops "
                "the job", c->rank);
}

static bool nccl_usable(const struct fb_backend *be, char *why, size_t whylen)
{
    const struct fb_nccl_lib *lib = fb_nccl_lib_get(why, whylen);

    if (!lib)
        return false;
    if (be != &fb_backend_cuda || !be->built) {
        snprintf(why, whylen, "NCCL reduces GPU buffers; backend '%s' has none", be->name);
        return false;
    }
    snprintf(why, whylen, "NCCL %d.%d.%d", lib->version / 10000, lib->version / 100 % 100,
             lib->version % 100);
    return true;
}

static fb_status nccl_comm_create(MPI_Comm comm, const struct fb_backend *be,
                                  struct fb_coll_comm **out)
{
    struct fb_coll_comm *c;
    ncclUniqueId id;
    int rank, size;
    fb_status st = FB_OK;

    (void)be;
    *out = NULL;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == 0)
        st = nccl_check(L->get_unique_id(&id), "ncclGetUniqueId");
    /* Every rank must learn whether rank 0 got an id before waiting on NCCL. */
    MPI_Bcast(&st, (int)sizeof st, MPI_BYTE, 0, comm);
    if (st != FB_OK)
        return st;
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm);
    if (!(c = calloc(1, sizeof *c)))
        return FB_ERR_NOMEM;
#if FB_NCCL_NONBLOCKING
    {
        /* Non-blocking: a rank that never joins cannot hold the others past --timeout. */
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0;
        st = nccl_settle(c->comm, L->comm_init_rank_config(&c->comm, size, id, rank, &config),
                         "ncclCommInitRankConfig");
    }
#else
    st = nccl_check(L->comm_init_rank(&c->comm, size, id, rank), "ncclCommInitRank");
#endif
    if (st != FB_OK) {
        if (c->comm)
            (void)L->comm_abort(c->comm);
        free(c);
        return st;
    }
    c->rank = rank;
    guard(c);
    *out = c;
    return FB_OK;
}

static fb_status nccl_comm_split(struct fb_coll_comm *parent, MPI_Comm sub,
                                 struct fb_coll_comm **out)
{
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)
    /* Children share the parent's setup (topology, bootstrap), which a fresh init repeats.
     * Every rank of the parent must call it, members or not. */
    struct fb_coll_comm *c;
    ncclComm_t child = NULL;
    fb_status st;

    ncclResult_t rc;

    *out = NULL;
    /* config NULL: the child inherits the parent's (non-blocking) configuration; the split is
     * settled on the child where there is one, and on the parent in any case */
    rc = L->comm_split(parent->comm, sub != MPI_COMM_NULL ? 0 : NCCL_SPLIT_NOCOLOR, parent->rank,
                       &child, NULL);
    st = nccl_settle(child ? child : parent->comm, rc, "ncclCommSplit");
    if (st == FB_OK && child && rc == ncclInProgress)
        st = nccl_settle(parent->comm, ncclInProgress, "ncclCommSplit");
    if (st != FB_OK || sub == MPI_COMM_NULL) {
        if (child)
            (void)L->comm_abort(child);
        return st;
    }
    if (!(c = calloc(1, sizeof *c))) {
        (void)L->comm_destroy(child);
        return FB_ERR_NOMEM;
    }
    c->comm = child;
    MPI_Comm_rank(sub, &c->rank);
    guard(c);
    *out = c;
    return FB_OK;
#else
    (void)parent;
    *out = NULL;
    return sub == MPI_COMM_NULL ? FB_OK : nccl_comm_create(sub, NULL, out);
#endif
}

static void nccl_comm_destroy(struct fb_coll_comm *c)
{
    if (!c)
        return;
    fb_watchdog_forget(c);
    (void)L->comm_destroy(c->comm);
    free(c);
}

static const char *nccl_transport(const struct fb_coll_comm *c)
{
    (void)c;
    return "nccl";
}

static ncclDataType_t nccl_type(enum fb_dtype dtype)
{
    switch (dtype) {
    case FB_DTYPE_FLOAT64: return ncclFloat64;
    case FB_DTYPE_INT32: return ncclInt32;
    case FB_DTYPE_FLOAT16: return ncclFloat16;
    case FB_DTYPE_INT8: return ncclInt8;
    case FB_DTYPE_FLOAT32:
    default: return ncclFloat32;
    }
}

static fb_status nccl_allreduce(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                                enum fb_dtype dtype, enum fb_redop op, struct fb_stream *s)
{
    (void)op;
    return nccl_settle(c->comm, L->all_reduce(send, recv, count, nccl_type(dtype), ncclSum,
                                              c->comm, (s ? fb_backend_cuda.stream_native(s) : NULL)),
                       "ncclAllReduce");
}

static fb_status nccl_sendrecv(struct fb_coll_comm *c, const void *send, int to, void *recv,
                               int from, size_t bytes, struct fb_stream *s)
{
    cudaStream_t stream = (s ? fb_backend_cuda.stream_native(s) : NULL);
    fb_status st;

    /* One group, so a bidirectional exchange cannot deadlock on the two sends. */
    if ((st = nccl_check(L->group_start(), "ncclGroupStart")) != FB_OK)
        return st;
    if (to >= 0 && (st = nccl_check(L->send(send, bytes, ncclInt8, to, c->comm, stream),
                                    "ncclSend")) != FB_OK) {
        (void)L->group_end();
        return st;
    }
    if (from >= 0 && (st = nccl_check(L->recv(recv, bytes, ncclInt8, from, c->comm, stream),
                                      "ncclRecv")) != FB_OK) {
        (void)L->group_end();
        return st;
    }
    return nccl_settle(c->comm, L->group_end(), "ncclGroupEnd");
}

const struct fb_coll fb_coll_nccl = {
    .name = "nccl",
    .built = true,
    .stream_ordered = true,
    .usable = nccl_usable,
    .comm_create = nccl_comm_create,
    .comm_destroy = nccl_comm_destroy,
    .comm_split = nccl_comm_split,
    .transport = nccl_transport,
    .allreduce = nccl_allreduce,
    .sendrecv = nccl_sendrecv,
};
