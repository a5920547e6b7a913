/* NCCL's entry points looked up in a library loaded at run time (nccl_lib.h), once per
 * process. The same pattern as NVML's (job/telemetry_nvml.c) and cuBLAS's
 * (train/conv_engine_cuda.c): dlopen, dlsym by name, a table of pointers. */
#define _POSIX_C_SOURCE 200809L
#include "nccl_lib.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static struct fb_nccl_lib g_lib;
static const struct fb_nccl_lib *g_loaded, *g_fake;
static char g_why[512];

const char *fb_nccl_library(void)
{
    const char *env = getenv("FB_NCCL_LIBRARY");
    return env && *env ? env : "libnccl.so.2";
}

/* dlsym(lib, name) into *fn. ISO C has no void* to function pointer conversion; POSIX
 * guarantees this one works (dlsym). */
static bool resolve(void *lib, const char *name, void *fn, size_t fnsize)
{
    void *p = dlsym(lib, name);

    memset(fn, 0, fnsize);
    if (p)
        memcpy(fn, &p, sizeof p);
    return p != NULL;
}

#define REQUIRE(field, name)                                                            \
    do {                                                                                \
        if (!resolve(lib, name, &g_lib.field, sizeof g_lib.field)) {                    \
            snprintf(g_why, sizeof g_why, "cannot use NCCL '%s': it lacks %s", path, name); \
            goto fail;                                                                  \
        }                                                                               \
    } while (0)

static void load(void)
{
    const char *path = fb_nccl_library();
    ncclResult_t (*get_version)(int *) = NULL;
    const char *err;
    void *lib;

    snprintf(g_lib.path, sizeof g_lib.path, "%s", path);
    if (!(lib = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
        err = dlerror();
        snprintf(g_why, sizeof g_why, "cannot load NCCL '%s': %s (set FB_NCCL_LIBRARY)", path,
                 err ? err : "dlopen failed");
        return;
    }
    REQUIRE(get_error_string, "ncclGetErrorString");
    REQUIRE(get_unique_id, "ncclGetUniqueId");
    REQUIRE(comm_init_rank, "ncclCommInitRank");
    REQUIRE(comm_destroy, "ncclCommDestroy");
    REQUIRE(comm_abort, "ncclCommAbort");
    REQUIRE(comm_get_async_error, "ncclCommGetAsyncError");
    REQUIRE(all_reduce, "ncclAllReduce");
    REQUIRE(send, "ncclSend");
    REQUIRE(recv, "ncclRecv");
    REQUIRE(group_start, "ncclGroupStart");
    REQUIRE(group_end, "ncclGroupEnd");
    REQUIRE(all_gather, "ncclAllGather");
    REQUIRE(reduce_scatter, "ncclReduceScatter");
    REQUIRE(broadcast, "ncclBroadcast");
    REQUIRE(reduce, "ncclReduce");
    (void)resolve(lib, "ncclAlltoAll", &g_lib.all_to_all, sizeof g_lib.all_to_all);
    (void)resolve(lib, "ncclCommInitRankConfig", &g_lib.comm_init_rank_config,
                  sizeof g_lib.comm_init_rank_config);
    (void)resolve(lib, "ncclCommFinalize", &g_lib.comm_finalize, sizeof g_lib.comm_finalize);
    (void)resolve(lib, "ncclCommSplit", &g_lib.comm_split, sizeof g_lib.comm_split);
    if (!resolve(lib, "ncclGetVersion", &get_version, sizeof get_version) ||
        get_version(&g_lib.version) != ncclSuccess) {
        snprintf(g_why, sizeof g_why, "cannot use NCCL '%s': ncclGetVersion failed", path);
        goto fail;
    }
    /* Kept loaded until exit: NCCL's threads may outlive the last communicator. */
    g_loaded = &g_lib;
    return;
fail:
    dlclose(lib);
}

const struct fb_nccl_lib *fb_nccl_lib_get(char *why, size_t whylen)
{
    if (g_fake)
        return g_fake;
    pthread_once(&g_once, load);
    if (!g_loaded && why && whylen)
        snprintf(why, whylen, "%s", g_why);
    return g_loaded;
}

void fb_nccl_lib_set(const struct fb_nccl_lib *fake)
{
    g_fake = fake;
}
