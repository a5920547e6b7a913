/* What the tests of coll_nccl.c share of a fake NCCL (nccl_lib.h): a log of the calls made, and
 * the entry points whose fake does the same everywhere (error strings, a unique id, a healthy
 * communicator, groups). Each test fills its own struct fb_nccl_lib with these and its own. */
#ifndef FB_FAKE_NCCL_H
#define FB_FAKE_NCCL_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "nccl_lib.h"

static char g_log[1024];             /* the calls, space-separated */
static ncclResult_t g_group_end_rc;  /* what ncclGroupEnd answers */

/* Appends one call (printf-style) to g_log. */
static void note(const char *fmt, ...)
{
    size_t n = strlen(g_log);
    va_list ap;

    if (n && n + 1 < sizeof g_log)
        g_log[n++] = ' ';
    va_start(ap, fmt);
    vsnprintf(g_log + n, sizeof g_log - n, fmt, ap);
    va_end(ap);
}

static const char *f_error_string(ncclResult_t rc) { return rc ? "fake failure" : "no error"; }
static ncclResult_t f_unique_id(ncclUniqueId *id)
{
    memset(id, 7, sizeof *id);
    return ncclSuccess;
}
static ncclResult_t f_async(ncclComm_t comm, ncclResult_t *state)
{
    (void)comm;
    *state = ncclSuccess;
    return ncclSuccess;
}
static ncclResult_t f_group_start(void)
{
    note("group_start");
    return ncclSuccess;
}
static ncclResult_t f_group_end(void)
{
    note("group_end");
    return g_group_end_rc;
}

/* The fields every fake table shares, for its initializer. */
#define FB_FAKE_NCCL_COMMON                                                               \
    .path = "fake-libnccl.so", .version = 22809, .get_error_string = f_error_string,      \
    .get_unique_id = f_unique_id, .comm_get_async_error = f_async,                        \
    .group_start = f_group_start, .group_end = f_group_end

#endif
