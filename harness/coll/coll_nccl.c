/* NCCL collectives on GPU buffers, NCCL loaded at run time (nccl_lib.h). The unique id travels
 * over MPI; NCCL does the rest. Communicators are blocking, as nccl-tests' and DDP's are: on a
 * non-blocking one (NCCL 2.28) every call starts a thread and answers ncclInProgress, tens of
 * microseconds each, which small messages and a per-tensor exchange would time. A hung
 * collective is still bounded by --timeout: the watchdog's thread aborts each communicator
 * (ncclCommAbort may be called from another thread on a blocking one) before it stops the job.
 * A communicator ends exactly once: aborted by the watchdog, or finalized and destroyed. */
#define _POSIX_C_SOURCE 200809L
#include "coll.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "nccl_lib.h"
#include "watchdog.h"

struct fb_coll_comm {
    const struct fb_nccl_lib *nccl;
    ncclComm_t comm;
    int rank, nranks;
    atomic_flag ended; /* set by the first of the watchdog's abort and comm_destroy */
};

int fb_nccl_version_code(void)
{
    const struct fb_nccl_lib *lib = fb_nccl_lib_get(NULL, 0);
    return lib ? lib->version : 0;
}

const char *fb_nccl_library_path(void)
{
    const struct fb_nccl_lib *lib = fb_nccl_lib_get(NULL, 0);
    return lib ? lib->path : "";
}

const char *fb_nccl_missing_why(void)
{
    static char why[512];
    return fb_nccl_lib_get(why, sizeof why) ? "" : why;
}

static fb_status nccl_check(const struct fb_nccl_lib *lib, ncclResult_t rc, const char *what)
{
    if (rc == ncclSuccess)
        return FB_OK;
    fb_error("%s failed: %s", what, lib->get_error_string(rc));
    return FB_ERR_NCCL;
}

/* The watchdog's side (another thread): a failed communicator, and the abort on a stop. */
static bool guard_failed(void *arg, char *why, size_t len)
{
    struct fb_coll_comm *c = arg;
    ncclResult_t state = ncclSuccess;

    if (c->nccl->comm_get_async_error(c->comm, &state) != ncclSuccess || state == ncclSuccess ||
        state == ncclInProgress)
        return false;
    snprintf(why, len, "NCCL communicator of rank %d failed: %s", c->rank,
             c->nccl->get_error_string(state));
    return true;
}

void fb_coll_nccl_abort(struct fb_coll_comm *c)
{
    if (!atomic_flag_test_and_set(&c->ended))
        (void)c->nccl->comm_abort(c->comm);
}

static void guard_abort(void *arg)
{
    fb_coll_nccl_abort(arg);
}

/* A communicator of ours around `comm` (owned from here on, aborted if this fails). */
static fb_status wrap(const struct fb_nccl_lib *lib, ncclComm_t comm, int rank, int nranks,
                      struct fb_coll_comm **out)
{
    struct fb_coll_comm *c = calloc(1, sizeof *c);

    if (!c) {
        (void)lib->comm_abort(comm);
        return FB_ERR_NOMEM;
    }
    c->nccl = lib;
    c->comm = comm;
    c->rank = rank;
    c->nranks = nranks;
    atomic_flag_clear(&c->ended);
    if (!fb_watchdog_guard(guard_abort, guard_failed, c))
        fb_warn("NCCL communicator of rank %d not watched (too many); --timeout still stops "
                "the job", rank);
    *out = c;
    return FB_OK;
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
    snprintf(why, whylen, "NCCL %d.%d.%d (%s)", lib->version / 10000, lib->version / 100 % 100,
             lib->version % 100, lib->path);
    return true;
}

static fb_status nccl_comm_create(MPI_Comm comm, const struct fb_backend *be,
                                  struct fb_coll_comm **out)
{
    char why[512];
    const struct fb_nccl_lib *lib = fb_nccl_lib_get(why, sizeof why);
    ncclComm_t nc = NULL;
    ncclUniqueId id;
    int rank, size;
    fb_status st = FB_OK;

    (void)be;
    *out = NULL;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (!lib) {
        fb_error("%s", why);
        return FB_ERR_UNSUPPORTED;
    }
    if (rank == 0)
        st = nccl_check(lib, lib->get_unique_id(&id), "ncclGetUniqueId");
    /* Every rank must learn whether rank 0 got an id before waiting on NCCL. */
    MPI_Bcast(&st, (int)sizeof st, MPI_BYTE, 0, comm);
    if (st != FB_OK)
        return st;
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm);
    /* Blocking: a rank that never joins holds the others until the watchdog's deadline, whose
     * message names it (this rank is waiting, not working). */
    fb_watchdog_wait_begin();
    if (lib->comm_init_rank_config) {
        /* Blocking whatever the environment says: NCCL_COMM_BLOCKING=0 makes a communicator
         * made without a configuration non-blocking, and then every call returns
         * ncclInProgress, which this code reads as a failure. (NCCL 2.14 and later; before it
         * there is no non-blocking mode.) */
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 1;
        st = nccl_check(lib, lib->comm_init_rank_config(&nc, size, id, rank, &config),
                        "ncclCommInitRankConfig");
    } else {
        st = nccl_check(lib, lib->comm_init_rank(&nc, size, id, rank), "ncclCommInitRank");
    }
    fb_watchdog_wait_end();
    if (st != FB_OK) {
        if (nc)
            (void)lib->comm_abort(nc);
        return st;
    }
    return wrap(lib, nc, rank, size, out);
}

static fb_status nccl_comm_split(struct fb_coll_comm *parent, MPI_Comm sub,
                                 struct fb_coll_comm **out)
{
    const struct fb_nccl_lib *lib = parent->nccl;
    ncclComm_t child = NULL;
    fb_status st;
    int rank, size;

    *out = NULL;
    if (!lib->comm_split) /* NCCL before 2.18: a fresh communicator for the members */
        return sub == MPI_COMM_NULL ? FB_OK : nccl_comm_create(sub, NULL, out);
    /* Children share the parent's setup (topology, bootstrap), which a fresh init repeats.
     * Every rank of the parent must call it, members or not; config NULL: the child is
     * blocking like its parent. NCCL_SPLIT_NOCOLOR is -1 in every NCCL that has the split. */
    fb_watchdog_wait_begin();
    st = nccl_check(lib, lib->comm_split(parent->comm, sub != MPI_COMM_NULL ? 0 : -1,
                                         parent->rank, &child, NULL),
                    "ncclCommSplit");
    fb_watchdog_wait_end();
    if (st != FB_OK || sub == MPI_COMM_NULL) {
        if (child)
            (void)lib->comm_abort(child);
        return st;
    }
    MPI_Comm_rank(sub, &rank);
    MPI_Comm_size(sub, &size);
    return wrap(lib, child, rank, size, out);
}

static void nccl_comm_destroy(struct fb_coll_comm *c)
{
    if (!c)
        return;
    /* Unwatched first, so the watchdog cannot abort what is being destroyed. */
    fb_watchdog_forget(c);
    if (!atomic_flag_test_and_set(&c->ended)) {
        /* Finalize flushes the communicator's work and its proxies before it is freed
         * (NCCL 2.14 and newer); if it fails, abort is what frees it. */
        if (c->nccl->comm_finalize &&
            nccl_check(c->nccl, c->nccl->comm_finalize(c->comm), "ncclCommFinalize") != FB_OK)
            (void)c->nccl->comm_abort(c->comm);
        else
            (void)nccl_check(c->nccl, c->nccl->comm_destroy(c->comm), "ncclCommDestroy");
    }
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

/* The stream's native handle; NULL (the legacy default stream) for none. */
static cudaStream_t native(struct fb_stream *s)
{
    return s ? (cudaStream_t)fb_backend_cuda.stream_native(s) : NULL;
}

static fb_status nccl_allreduce(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                                enum fb_dtype dtype, enum fb_redop op, struct fb_stream *s)
{
    (void)op;
    return nccl_check(c->nccl,
                      c->nccl->all_reduce(send, recv, count, nccl_type(dtype), ncclSum, c->comm,
                                          native(s)),
                      "ncclAllReduce");
}

static fb_status nccl_sendrecv(struct fb_coll_comm *c, const void *send, int to, void *recv,
                               int from, size_t bytes, struct fb_stream *s)
{
    const struct fb_nccl_lib *lib = c->nccl;
    cudaStream_t stream = native(s);
    fb_status st, end;

    /* One group, so a bidirectional exchange cannot deadlock on the two sends. */
    if ((st = nccl_check(lib, lib->group_start(), "ncclGroupStart")) != FB_OK)
        return st;
    st = FB_OK;
    if (to >= 0)
        st = nccl_check(lib, lib->send(send, bytes, ncclInt8, to, c->comm, stream), "ncclSend");
    if (st == FB_OK && from >= 0)
        st = nccl_check(lib, lib->recv(recv, bytes, ncclInt8, from, c->comm, stream), "ncclRecv");
    /* The group is ended on every path, and its answer checked: the first error wins. */
    end = nccl_check(lib, lib->group_end(), "ncclGroupEnd");
    return st != FB_OK ? st : end;
}

static int nccl_size(const struct fb_coll_comm *c)
{
    return c->nranks;
}

static fb_status nccl_allgather(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                                enum fb_dtype dtype, struct fb_stream *s)
{
    /* NCCL's in place is send == recv + rank's block, which is where ours keeps it. */
    if (send == recv)
        send = (char *)recv + (size_t)c->rank * count * fb_dtype_size(dtype);
    return nccl_check(c->nccl,
                      c->nccl->all_gather(send, recv, count, nccl_type(dtype), c->comm, native(s)),
                      "ncclAllGather");
}

static fb_status nccl_reduce_scatter(struct fb_coll_comm *c, const void *send, void *recv,
                                     size_t count, enum fb_dtype dtype, enum fb_redop op,
                                     struct fb_stream *s)
{
    (void)op;
    if (send == recv) /* the result in this rank's block: NCCL's in place */
        recv = (char *)recv + (size_t)c->rank * count * fb_dtype_size(dtype);
    return nccl_check(c->nccl,
                      c->nccl->reduce_scatter(send, recv, count, nccl_type(dtype), ncclSum,
                                              c->comm, native(s)),
                      "ncclReduceScatter");
}

static fb_status nccl_alltoall(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                               enum fb_dtype dtype, struct fb_stream *s)
{
    const struct fb_nccl_lib *lib = c->nccl;
    size_t blk = count * fb_dtype_size(dtype);
    cudaStream_t stream = native(s);
    fb_status st = FB_OK, end;

    if (send == recv)
        return FB_ERR_USAGE;
    if (lib->all_to_all)
        return nccl_check(lib, lib->all_to_all(send, recv, count, nccl_type(dtype), c->comm,
                                               stream),
                          "ncclAlltoAll");
    /* Before NCCL 2.28: one group of a send and a receive per peer (nccl-tests' own way). */
    if ((st = nccl_check(lib, lib->group_start(), "ncclGroupStart")) != FB_OK)
        return st;
    for (int r = 0; r < c->nranks && st == FB_OK; r++) {
        st = nccl_check(lib, lib->send((const char *)send + (size_t)r * blk, count,
                                       nccl_type(dtype), r, c->comm, stream), "ncclSend");
        if (st == FB_OK)
            st = nccl_check(lib, lib->recv((char *)recv + (size_t)r * blk, count,
                                           nccl_type(dtype), r, c->comm, stream), "ncclRecv");
    }
    end = nccl_check(lib, lib->group_end(), "ncclGroupEnd");
    return st != FB_OK ? st : end;
}

static fb_status nccl_broadcast(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                                enum fb_dtype dtype, int root, struct fb_stream *s)
{
    return nccl_check(c->nccl,
                      c->nccl->broadcast(send, recv, count, nccl_type(dtype), root, c->comm,
                                         native(s)),
                      "ncclBroadcast");
}

static fb_status nccl_reduce(struct fb_coll_comm *c, const void *send, void *recv, size_t count,
                             enum fb_dtype dtype, enum fb_redop op, int root, struct fb_stream *s)
{
    (void)op;
    return nccl_check(c->nccl,
                      c->nccl->reduce(send, recv, count, nccl_type(dtype), ncclSum, root,
                                      c->comm, native(s)),
                      "ncclReduce");
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
    .size = nccl_size,
    .allgather = nccl_allgather,
    .reduce_scatter = nccl_reduce_scatter,
    .alltoall = nccl_alltoall,
    .broadcast = nccl_broadcast,
    .reduce = nccl_reduce,
};
