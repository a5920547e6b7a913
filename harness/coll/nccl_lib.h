/* NCCL loaded at run time: libnccl is dlopen'ed ($FB_NCCL_LIBRARY, else "libnccl.so.2"), never
 * linked, so the binary starts without it, `--coll mpi` runs where it is missing, and one binary
 * can measure two NCCL versions side by side (docs/nccl-versions.md). Only nccl.h is needed to
 * build. The table of entry points is internal to coll_nccl.c and its tests, which fill one
 * with fakes to check the communicator's life (init, abort once, finalize, destroy). */
#ifndef FB_NCCL_LIB_H
#define FB_NCCL_LIB_H

#include <nccl.h>
#include <stdbool.h>
#include <stddef.h>

/* The entry points fabricbench calls, with NCCL's own signatures. `comm_init_rank_config` and
 * `comm_finalize` (NCCL 2.14), `comm_split` (2.18) and `all_to_all` (2.28) may be NULL: an older
 * library lacks them. */
struct fb_nccl_lib {
    char path[256]; /* the library loaded, as given to dlopen */
    int version;    /* ncclGetVersion's answer (22809 = 2.28.9) */
    const char *(*get_error_string)(ncclResult_t);
    ncclResult_t (*get_unique_id)(ncclUniqueId *);
    ncclResult_t (*comm_init_rank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*comm_init_rank_config)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *);
    ncclResult_t (*comm_split)(ncclComm_t, int, int, ncclComm_t *, void *);
    ncclResult_t (*comm_finalize)(ncclComm_t);
    ncclResult_t (*comm_destroy)(ncclComm_t);
    ncclResult_t (*comm_abort)(ncclComm_t);
    ncclResult_t (*comm_get_async_error)(ncclComm_t, ncclResult_t *);
    ncclResult_t (*all_reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                               ncclComm_t, cudaStream_t);
    ncclResult_t (*send)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*recv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*group_start)(void);
    ncclResult_t (*group_end)(void);
    ncclResult_t (*all_gather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                               cudaStream_t);
    ncclResult_t (*reduce_scatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t,
                                   ncclComm_t, cudaStream_t);
    ncclResult_t (*broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,
                              cudaStream_t);
    ncclResult_t (*reduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, int,
                           ncclComm_t, cudaStream_t);
    /* ncclAlltoAll (NCCL 2.28); NULL before it: all-to-all is a group of sends and receives. */
    ncclResult_t (*all_to_all)(const void *, void *, size_t, ncclDataType_t, ncclComm_t,
                               cudaStream_t);
};

/* The library fabricbench loads: $FB_NCCL_LIBRARY when set and non-empty, else
 * "libnccl.so.2" (found through the loader's search path). */
const char *fb_nccl_library(void);

/* The loaded table, loading it at the first call (thread-safe; the library stays loaded until
 * exit). NULL when it cannot be loaded, with why filled ("cannot load NCCL 'x': ..."); the same
 * answer every time. */
const struct fb_nccl_lib *fb_nccl_lib_get(char *why, size_t whylen);

/* Tests: makes `fake` (borrowed, must outlive every use) the table fb_nccl_lib_get answers,
 * before its first call; NULL goes back to loading. */
void fb_nccl_lib_set(const struct fb_nccl_lib *fake);

/* Tests: what the watchdog calls on a communicator of coll_nccl.c when it stops the job. */
struct fb_coll_comm;
void fb_coll_nccl_abort(struct fb_coll_comm *c);

#endif
