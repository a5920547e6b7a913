/* Fault injection for the device backends (backend_fault.h): parses FB_FAULT, counts the calls
 * of each kind and picks the one that fails. The host backend consults it, so the faults run
 * exactly the code that runs on host (memfit's, compute's and MPI staging's choices depend on
 * which backend is open; a separate "fault" backend would change them). */
#include "backend_fault.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

static const char *const kind_names[FB_FAULT_KINDS] = {"alloc", "copy", "stream", "event", "ipc"};
static const char *const kind_nouns[FB_FAULT_KINDS] = {"allocation", "copy", "stream creation",
                                                       "event creation", "IPC open"};

/* One backend is open per process (backend.h), so the plan and the counts are the process's.
 * The counters are atomic: the input pipeline's workers allocate and copy too. */
static struct {
    bool on;      /* FB_FAULT set: count */
    bool armed;   /* a call is to fail */
    enum fb_fault_kind kind;
    long nth;     /* the 1-based call of `kind` that fails */
    int only_rank; /* -1: every rank fails its own Nth call */
    int rank;
    atomic_long calls[FB_FAULT_KINDS];
} fault;

/* KIND:N[@RANK]; false with the reason in why. */
static bool parse_plan(const char *text, char *why, size_t whylen)
{
    const char *colon = strchr(text, ':');
    size_t klen = colon ? (size_t)(colon - text) : 0;
    bool known = false;
    char *end;

    for (int k = 0; k < FB_FAULT_KINDS; k++)
        if (klen && strlen(kind_names[k]) == klen && strncmp(text, kind_names[k], klen) == 0) {
            fault.kind = (enum fb_fault_kind)k;
            known = true;
        }
    if (!known) {
        snprintf(why, whylen, "FB_FAULT='%s': expected KIND:N[@RANK] with KIND alloc, copy, "
                 "stream, event or ipc, or 'count'", text);
        return false;
    }
    fault.nth = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || fault.nth < 1 || (*end && *end != '@')) {
        snprintf(why, whylen, "FB_FAULT='%s': N must be a whole number from 1", text);
        return false;
    }
    if (*end == '@') {
        const char *r = end + 1;
        long rank = strtol(r, &end, 10);
        if (end == r || *end || rank < 0 || rank > 1 << 30) {
            snprintf(why, whylen, "FB_FAULT='%s': RANK after '@' must be a rank number", text);
            return false;
        }
        fault.only_rank = (int)rank;
    }
    return true;
}

fb_status fb_fault_setup(void)
{
    const char *env = getenv("FB_FAULT");
    char why[256];
    int init = 0;

    for (int k = 0; k < FB_FAULT_KINDS; k++)
        atomic_store(&fault.calls[k], 0);
    fault.on = env && *env;
    fault.armed = false;
    fault.only_rank = -1;
    fault.rank = 0;
    if (!fault.on)
        return FB_OK;
    MPI_Initialized(&init);
    if (init)
        MPI_Comm_rank(MPI_COMM_WORLD, &fault.rank);
    if (strcmp(env, "count") == 0)
        return FB_OK;
    if (!parse_plan(env, why, sizeof why)) {
        fault.on = false;
        if (fault.rank == 0) /* every rank reads the same variable: one line, not one per rank */
            fb_error("%s", why);
        return FB_ERR_USAGE;
    }
    fault.armed = true;
    return FB_OK;
}

bool fb_fault_hit(enum fb_fault_kind kind)
{
    long n;

    if (!fault.on)
        return false;
    n = atomic_fetch_add(&fault.calls[kind], 1) + 1;
    if (!fault.armed || kind != fault.kind || n != fault.nth ||
        (fault.only_rank >= 0 && fault.only_rank != fault.rank))
        return false;
    fb_warn("fault injection: failing %s #%ld as FB_FAULT asks", kind_nouns[kind], n);
    return true;
}

void fb_fault_report(void)
{
    if (!fault.on || fault.armed)
        return;
    fb_warn("fault injection counts (FB_FAULT=count): rank %d made %ld allocations, %ld copies, "
            "%ld stream creations, %ld event creations, %ld IPC opens", fault.rank,
            atomic_load(&fault.calls[FB_FAULT_ALLOC]), atomic_load(&fault.calls[FB_FAULT_COPY]),
            atomic_load(&fault.calls[FB_FAULT_STREAM]), atomic_load(&fault.calls[FB_FAULT_EVENT]),
            atomic_load(&fault.calls[FB_FAULT_IPC]));
}
