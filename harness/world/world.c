/* MPI started and ended the one way run and doctor share; rank, node and local-rank discovery. */
#define _DEFAULT_SOURCE
#include "world.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "watchdog.h"

void fb_world_start(int *argc, char ***argv, const char *command, double timeout_s,
                    int required, int *provided)
{
    /* armed before MPI_Init, so a job that never starts ends too */
    (void)fb_watchdog_start(timeout_s, command);
    MPI_Init_thread(argc, argv, required, provided);
    fb_watchdog_mpi_ready();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

const char *fb_mpi_thread_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    case MPI_THREAD_MULTIPLE: return "multiple";
    default: return "unknown";
    }
}

int fb_world_finish(int rc)
{
    /* a signal that came after the last check still makes the run "interrupted" (rank 0
     * marked it); every rank says so */
    if (fb_watchdog_interrupted() && (rc == 0 || rc == 1))
        rc = FB_EXIT_INTERRUPTED;
    fb_watchdog_finalizing();
    MPI_Finalize();
    fb_watchdog_stop();
    return rc;
}

/* Test only (docs/scale.md): FB_TEST_RANKS_PER_NODE=k makes pretend nodes of k consecutive
 * ranks, so that one machine plays several nodes in the scale and sampling tests. The links
 * between pretend nodes read "network"; nothing else about them is true. Never set it on a
 * cluster. */
static fb_status test_nodes(struct fb_world *w)
{
    const char *text = getenv("FB_TEST_RANKS_PER_NODE");
    char *end;
    long k;

    if (!text || !*text)
        return FB_OK;
    k = strtol(text, &end, 10);
    if (*end || k < 1 || k > 1000000) {
        if (w->rank == 0)
            fb_error("FB_TEST_RANKS_PER_NODE: '%s' is not a count of ranks (1 to 1000000)", text);
        return FB_ERR_USAGE;
    }
    if (w->rank == 0)
        fb_warn("FB_TEST_RANKS_PER_NODE=%ld: pretend nodes of %ld consecutive ranks (for tests only)",
                k, k);
    MPI_Comm_free(&w->node_comm);
    if (MPI_Comm_split(w->comm, (int)(w->rank / k), w->rank, &w->node_comm) != MPI_SUCCESS)
        return FB_ERR_MPI;
    return FB_OK;
}

fb_status fb_world_init(struct fb_world *w)
{
    int is_leader, leaders_before = 0;
    fb_status st;

    memset(w, 0, sizeof *w);
    w->comm = w->node_comm = w->view_comm = MPI_COMM_NULL;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &w->comm) != MPI_SUCCESS)
        return FB_ERR_MPI;
    MPI_Comm_rank(w->comm, &w->rank);
    MPI_Comm_size(w->comm, &w->size);
    if (gethostname(w->host, sizeof w->host - 1) != 0)
        strcpy(w->host, "unknown");
    if (MPI_Comm_split_type(w->comm, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &w->node_comm) !=
        MPI_SUCCESS)
        return FB_ERR_MPI;
    if ((st = test_nodes(w)) != FB_OK)
        return st;
    MPI_Comm_rank(w->node_comm, &w->local_rank);
    MPI_Comm_size(w->node_comm, &w->local_size);

    /* Number the nodes by their lowest rank: an exclusive prefix count of node leaders. */
    is_leader = w->local_rank == 0;
    MPI_Exscan(&is_leader, &leaders_before, 1, MPI_INT, MPI_SUM, w->comm);
    if (w->rank == 0)
        leaders_before = 0;
    w->node = is_leader ? leaders_before : 0;
    MPI_Bcast(&w->node, 1, MPI_INT, 0, w->node_comm);
    MPI_Allreduce(&is_leader, &w->nodes, 1, MPI_INT, MPI_SUM, w->comm);
    fb_log_set_identity(w->rank, w->host);
    /* The rank-to-host map, once: messages name a failing or late rank with its host. */
    if (!(w->hosts = calloc((size_t)w->size, sizeof *w->hosts)))
        return FB_ERR_NOMEM;
    if (MPI_Allgather(w->host, (int)sizeof w->host, MPI_CHAR, w->hosts, (int)sizeof w->host,
                      MPI_CHAR, w->comm) != MPI_SUCCESS)
        return FB_ERR_MPI;
    for (int r = 0; r < w->size; r++)
        w->hosts[r][sizeof w->host - 1] = '\0';
    fb_watchdog_set_hosts((const char(*)[64])w->hosts, w->size);
    /* at MPI_THREAD_MULTIPLE a timeout also names the working ranks of other hosts */
    {
        int level = MPI_THREAD_SINGLE;
        MPI_Query_thread(&level);
        if (level == MPI_THREAD_MULTIPLE &&
            MPI_Comm_dup(MPI_COMM_WORLD, &w->view_comm) == MPI_SUCCESS &&
            !fb_watchdog_share_view(w->view_comm))
            MPI_Comm_free(&w->view_comm);
    }
    return FB_OK;
}

void fb_world_release(struct fb_world *w)
{
    fb_watchdog_set_hosts(NULL, 0);
    if (w->view_comm != MPI_COMM_NULL && fb_watchdog_share_view(MPI_COMM_NULL))
        MPI_Comm_free(&w->view_comm);
    free(w->hosts);
    w->hosts = NULL;
    if (w->node_comm != MPI_COMM_NULL)
        MPI_Comm_free(&w->node_comm);
    if (w->comm != MPI_COMM_NULL)
        MPI_Comm_free(&w->comm);
}

/* The first agreed failure of this process (fb_world_culprit). */
static struct {
    fb_status st;
    int rank;
} culprit = {FB_OK, -1};

bool fb_world_all(const struct fb_world *w, bool mine, char *why, size_t len, int *first)
{
    int me = mine ? w->size : w->rank, low = w->rank;

    if (first)
        *first = -1;
    fb_watchdog_wait_begin();
    if (MPI_Allreduce(&me, &low, 1, MPI_INT, MPI_MIN, w->comm) != MPI_SUCCESS)
        low = mine ? w->size : w->rank; /* MPI failed: this rank's own answer */
    else if (low < w->size && why && len > 0 && len <= (size_t)INT_MAX &&
             MPI_Bcast(why, (int)len, MPI_CHAR, low, w->comm) == MPI_SUCCESS)
        why[len - 1] = '\0';
    fb_watchdog_wait_end();
    if (low >= w->size)
        return true;
    if (first)
        *first = low;
    return false;
}

/* Completes req: tests it back to back for spin_us (a partner that is nearly there is met at
 * once), then sleeps between tests, naps growing from 20 us to cap_us, so a rank that waits long
 * for another leaves the CPU to it instead of polling (Open MPI's blocking calls spin, yielding
 * at best: sampled through a whole test run on 2 cores, perf found fabricbench's ranks in
 * sched_yield's user side in 3.4% of all samples, its system call beside that; gdb stacks of
 * one test's busy ranks put a third of them in agreement and barriers: docs/testing.md round
 * nine). A sleeping rank learns of the completion up to a nap late. */
static fb_status wait_napping(MPI_Request *req, double spin_us, long cap_us)
{
    struct timespec nap = {0, 20 * 1000};
    struct timespec t0;
    int done = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        struct timespec now;
        if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return FB_ERR_MPI;
        if (done)
            return FB_OK;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) * 1e6 + (double)(now.tv_nsec - t0.tv_nsec) / 1e3 <
            spin_us)
            continue;
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < cap_us * 1000)
            nap.tv_nsec = nap.tv_nsec * 2 < cap_us * 1000 ? nap.tv_nsec * 2 : cap_us * 1000;
    }
}

fb_status fb_world_agree_who(const struct fb_world *w, fb_status mine, int *rank)
{
    /* (severity * 256 + code, rank): MAXLOC keeps the highest pair, the lowest rank on ties */
    struct {
        int value, rank;
    } in, out = {(int)FB_SEV_TRANSPORT * 256 + (int)FB_ERR_MPI, -1};
    fb_status st;
    int rc;

    /* SIGINT/SIGTERM is agreed here like any status: every rank stops at the same check. */
    if (fb_watchdog_interrupted() &&
        fb_status_severity(mine) < fb_status_severity(FB_ERR_INTERRUPTED))
        mine = FB_ERR_INTERRUPTED;
    in.value = (int)fb_status_severity(mine) * 256 + (int)mine;
    in.rank = w->rank;
    /* Agreement sits outside any timing, often after work one rank does longer than the others
     * (verification, writing results): after 200 us its waiters sleep, naps up to 1 ms. */
    fb_watchdog_wait_begin();
    {
        MPI_Request req;
        rc = MPI_Iallreduce(&in, &out, 1, MPI_2INT, MPI_MAXLOC, w->comm, &req);
        if (rc == MPI_SUCCESS && wait_napping(&req, 200.0, 1000) != FB_OK)
            rc = MPI_ERR_OTHER;
    }
    fb_watchdog_wait_end();
    if (rc != MPI_SUCCESS) {
        st = FB_ERR_MPI;
        out.rank = w->rank;
    } else {
        st = (fb_status)(out.value % 256);
    }
    if (st == FB_OK)
        out.rank = -1;
    if (fb_status_severity(st) > FB_SEV_WAIVED && culprit.st == FB_OK) {
        culprit.st = st;
        culprit.rank = out.rank;
    }
    if (rank)
        *rank = out.rank;
    return st;
}

fb_status fb_world_agree(const struct fb_world *w, fb_status mine)
{
    return fb_world_agree_who(w, mine, NULL);
}

void fb_world_culprit_set(fb_status st, int rank)
{
    culprit.st = st;
    culprit.rank = rank;
}

bool fb_world_culprit(const struct fb_world *w, fb_status *st, int *rank, char *host,
                      size_t len)
{
    if (culprit.st == FB_OK)
        return false;
    *st = culprit.st;
    *rank = culprit.rank;
    snprintf(host, len, "%s", fb_world_host_of(w, culprit.rank));
    return true;
}

const char *fb_world_stop_reason(const struct fb_world *w, fb_status st, char *buf, size_t len)
{
    fb_status cause = st;
    int who = -1;
    char host[64];

    if (st != FB_ERR_INTERRUPTED && fb_world_culprit(w, &cause, &who, host, sizeof host) &&
        who >= 0)
        snprintf(buf, len, "rank %d on %s: %s", who, host, fb_status_str(cause));
    else
        snprintf(buf, len, "%s", fb_status_str(st));
    return buf;
}

const char *fb_world_host_of(const struct fb_world *w, int r)
{
    if (!w->hosts || r < 0 || r >= w->size)
        return "?";
    return w->hosts[r];
}

static fb_status barrier(MPI_Comm comm, bool quiet, int *flags);
static fb_status release(MPI_Comm timed);

enum { BARRIER_INTERRUPTED = 1, BARRIER_FAILED = 2 };

fb_status fb_world_barrier(MPI_Comm comm, bool quiet)
{
    return fb_world_barrier_start(comm, MPI_COMM_NULL, quiet, false, NULL);
}

fb_status fb_world_barrier_failed(MPI_Comm comm, bool quiet, bool failed, bool *any_failed)
{
    return fb_world_barrier_start(comm, MPI_COMM_NULL, quiet, failed, any_failed);
}

fb_status fb_world_barrier_start(MPI_Comm comm, MPI_Comm timed, bool quiet, bool failed,
                                 bool *any_failed)
{
    int flags = (fb_watchdog_interrupted() ? BARRIER_INTERRUPTED : 0) |
                (failed ? BARRIER_FAILED : 0);
    fb_status st;

    fb_watchdog_wait_begin();
    st = barrier(comm, quiet, &flags);
    if (st == FB_OK && !quiet && timed != MPI_COMM_NULL)
        st = release(timed);
    fb_watchdog_wait_end();
    if (any_failed)
        *any_failed = st != FB_OK || (flags & BARRIER_FAILED);
    return st == FB_OK && (flags & BARRIER_INTERRUPTED) ? FB_ERR_INTERRUPTED : st;
}

/* *flags in: this rank's; out: every rank's, or'ed. */
static fb_status barrier(MPI_Comm comm, bool quiet, int *flags)
{
    MPI_Request req;
    int mine = *flags;

    /* The barrier is a one-int all-reduce of the flags: no rank leaves before all have
     * arrived, as with MPI_Barrier, and all learn together that one was signalled or failed.
     * Every rank uses the non-blocking form: MPI never matches a blocking collective with a
     * non-blocking one. */
    if (MPI_Iallreduce(&mine, flags, 1, MPI_INT, MPI_BOR, comm, &req) != MPI_SUCCESS)
        return FB_ERR_MPI;
    /* An active rank starts a timing: polled for 2 ms, so ranks in step (an OSU-style
     * iteration between barriers) leave together; one that waits longer (a partner still
     * filling or checking its buffers) sleeps, naps up to 200 us, and learns of the end that
     * late at most (before a timing, release() then brings the measuring ranks together).
     * Quiet ranks sleep between tests, with naps growing from 20 us to 2 ms, so a long wait
     * wakes rarely. Measured 2026-11-30 on the 2-core CI machine (docs/methodology.md), 4
     * ranks, 2 of them idle (np 2 with no idle ranks in brackets): a 1 KiB all-reduce 4.4 us
     * sleeping against 12.6 us yielding (busy yielders take the core from the small-message
     * ranks); 1 MiB 250-314 us sleeping against 207-216 us yielding (175-195). Small messages,
     * where a disturbance weighs most, decide. */
    return quiet ? wait_napping(&req, 0.0, 2000) : wait_napping(&req, 2000.0, 200);
}

/* The measuring ranks' second round before a timing, over `timed` (their own communicator):
 * ranks that napped in the barrier leave it up to a nap apart, and that changes what is
 * measured: both ways at once between two hosts over Open MPI's TCP transport, the directions
 * then took turns in every trial (0.051 GB/s each way on the 800 Mbit/s test link, against
 * 0.096 where they overlap; docs/methodology.md). Every measuring rank comes here
 * within a nap of the others and polls, so they leave together; the quiet ranks, whose naps
 * (up to 2 ms) would hold a round over every rank, are not in it. */
static fb_status release(MPI_Comm timed)
{
    MPI_Request req;

    /* the flags are every rank's already (the first round): only the meeting matters */
    if (MPI_Ibarrier(timed, &req) != MPI_SUCCESS)
        return FB_ERR_MPI;
    return wait_napping(&req, 2000.0, 200);
}

int fb_world_count_nodes(const int *node_of, const int *flag, int nranks)
{
    int count = 0, max_node = 0;
    char *seen;

    for (int r = 0; r < nranks; r++)
        if (node_of[r] > max_node)
            max_node = node_of[r];
    if (!(seen = calloc((size_t)max_node + 1, 1)))
        return -1;
    for (int r = 0; r < nranks; r++)
        if ((!flag || flag[r]) && !seen[node_of[r]]) {
            seen[node_of[r]] = 1;
            count++;
        }
    free(seen);
    return count;
}
