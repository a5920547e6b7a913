/* The job's view at a timeout: where MPI gives MPI_THREAD_MULTIPLE, every rank's watchdog, as
 * it stops the job, sends its published state to rank 0 on a communicator of its own, and rank
 * 0's watchdog waits a few seconds for them, so that a timeout names the rank that was still
 * working on another host (a node board only shows a rank its own node's). The only MPI calls
 * made beside the main thread's besides MPI_Abort, on that communicator alone and from a thread
 * of their own that the watchdog waits for a bounded time; at a lower thread level nothing is
 * sent. */
#define _GNU_SOURCE
#include "watchdog.h"

#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "watchdog_impl.h"

enum { VIEW_TAG = 7201 };
/* How long rank 0 waits for the other ranks' states once its own phase timed out: every rank
 * whose phase began with rank 0's times out within a tick of it (a rank that waits since an
 * earlier phase, earlier); one that has not sent by then is named as silent. A rank other than
 * 0 gives its send as long (rank 0's watchdog may fire a little later). */
#define VIEW_WAIT_S 3.0
/* At most this many ranks are named in a line. */
enum { VIEW_LISTED = 8 };

static pthread_mutex_t view_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    MPI_Comm comm;  /* MPI_COMM_NULL: no view */
    int size;
    bool used;      /* the watchdog took it: not freed (the job is ending) */
    struct pub *st; /* rank 0: each rank's state, its `since` made an age (seconds) */
    bool *got;      /* rank 0: which ranks sent one */
    bool done;      /* rank 0: the exchange ran */
} v = {.comm = MPI_COMM_NULL};

bool fb_watchdog_share_view(MPI_Comm comm)
{
    int level = MPI_THREAD_SINGLE, size = 0;
    bool freeable;

    if (comm != MPI_COMM_NULL) {
        MPI_Query_thread(&level);
        if (level != MPI_THREAD_MULTIPLE)
            return false;
        MPI_Comm_size(comm, &size);
    }
    pthread_mutex_lock(&view_mu);
    freeable = !v.used;
    if (comm != MPI_COMM_NULL) {
        v.comm = comm;
        v.size = size;
    } else if (!v.used) {
        v.comm = MPI_COMM_NULL;
    }
    pthread_mutex_unlock(&view_mu);
    return comm != MPI_COMM_NULL || freeable;
}

/* Rank != 0: this rank's state to rank 0, given up to VIEW_WAIT_S to leave. */
static void send_state(MPI_Comm comm, const struct pub *me)
{
    MPI_Request req;
    int done = 0;
    double until = fb_clock_now_s() + VIEW_WAIT_S;

    if (MPI_Isend(me, (int)sizeof *me, MPI_BYTE, 0, VIEW_TAG, comm, &req) != MPI_SUCCESS)
        return;
    while (!done && fb_clock_now_s() < until) {
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return;
        if (!done)
            fb_clock_sleep_s(0.01);
    }
    /* not taken in time (rank 0 gone or busy): left to the end of the job */
    if (!done)
        MPI_Request_free(&req);
}

/* Rank 0: the others' states, until every rank sent one or VIEW_WAIT_S passed. */
static void gather_states(MPI_Comm comm, int size, struct pub *st, bool *got)
{
    struct pub in;
    MPI_Request req = MPI_REQUEST_NULL;
    double until = fb_clock_now_s() + VIEW_WAIT_S;
    int have = 1;

    while (have < size && fb_clock_now_s() < until) {
        MPI_Status status;
        int done = 0;
        if (req == MPI_REQUEST_NULL &&
            MPI_Irecv(&in, (int)sizeof in, MPI_BYTE, MPI_ANY_SOURCE, VIEW_TAG, comm, &req) !=
                MPI_SUCCESS)
            return;
        if (MPI_Test(&req, &done, &status) != MPI_SUCCESS)
            return;
        if (!done) {
            fb_clock_sleep_s(0.01);
            continue;
        }
        req = MPI_REQUEST_NULL;
        if (status.MPI_SOURCE > 0 && status.MPI_SOURCE < size && !got[status.MPI_SOURCE]) {
            in.host[sizeof in.host - 1] = in.bench[sizeof in.bench - 1] = '\0';
            in.point[sizeof in.point - 1] = in.phase[sizeof in.phase - 1] = '\0';
            st[status.MPI_SOURCE] = in;
            got[status.MPI_SOURCE] = true;
            have++;
        }
    }
    if (req != MPI_REQUEST_NULL) {
        MPI_Cancel(&req);
        MPI_Request_free(&req);
    }
}

/* One exchange, run by a thread of its own: should a call into MPI not return (a library lock
 * held by a main thread stuck inside MPI), the watchdog gives up on it after VIEW_WAIT_S
 * and 1.5 s more, and stops the job all the same. */
struct exchange {
    MPI_Comm comm;
    int size;
    struct pub me;
    struct pub *st; /* rank 0 */
    bool *got;
    bool finished, abandoned; /* under view_mu */
};

static void exchange_free(struct exchange *x)
{
    free(x->st);
    free(x->got);
    free(x);
}

static void *exchange_run(void *arg)
{
    struct exchange *x = arg;
    bool abandoned;

    if (fb_watchdog_self.rank != 0)
        send_state(x->comm, &x->me);
    else
        gather_states(x->comm, x->size, x->st, x->got);
    pthread_mutex_lock(&view_mu);
    x->finished = true;
    abandoned = x->abandoned;
    if (!abandoned && fb_watchdog_self.rank == 0) {
        v.st = x->st;
        v.got = x->got;
        v.done = true;
        x->st = NULL;
        x->got = NULL;
    }
    pthread_mutex_unlock(&view_mu);
    if (abandoned)
        exchange_free(x);
    return NULL;
}

void fb_watchdog_view_exchange(const struct pub *mine)
{
    struct exchange *x;
    double until;
    pthread_t t;
    MPI_Comm comm;
    int size;

    pthread_mutex_lock(&view_mu);
    comm = v.comm;
    size = v.size;
    if (comm != MPI_COMM_NULL)
        v.used = true;
    pthread_mutex_unlock(&view_mu);
    if (comm == MPI_COMM_NULL || mine->mpi_start || !(x = calloc(1, sizeof *x)))
        return;
    x->comm = comm;
    x->size = size;
    x->me = *mine;
    x->me.since = fb_clock_now_s() - mine->since; /* an age: two hosts' clocks do not compare */
    if (fb_watchdog_self.rank == 0) {
        x->st = calloc((size_t)size, sizeof *x->st);
        x->got = calloc((size_t)size, sizeof *x->got);
        if (!x->st || !x->got) {
            exchange_free(x);
            return;
        }
        x->st[0] = x->me;
        x->got[0] = true;
    }
    if (pthread_create(&t, NULL, exchange_run, x) != 0) {
        exchange_free(x);
        return;
    }
    pthread_detach(t);
    /* in ticks of 50 ms, each a sign of life on the node board: a rank waiting here is not
     * frozen, and its own line must not say so */
    until = fb_clock_now_s() + VIEW_WAIT_S + 1.5;
    pthread_mutex_lock(&view_mu);
    while (!x->finished && fb_clock_now_s() < until) {
        pthread_mutex_unlock(&view_mu);
        fb_clock_sleep_s(0.05);
        fb_watchdog_heartbeat();
        pthread_mutex_lock(&view_mu);
    }
    if (x->finished) {
        pthread_mutex_unlock(&view_mu);
        exchange_free(x);
        return;
    }
    x->abandoned = true; /* the thread frees it, if it ever returns */
    pthread_mutex_unlock(&view_mu);
    fb_warn("the job's view: a call into MPI did not return within %.1f s; the timeout is "
            "handled without it", VIEW_WAIT_S + 1.5);
}

int fb_watchdog_view(struct fb_watchdog_rank *out, int n)
{
    int size;

    pthread_mutex_lock(&view_mu);
    size = v.done ? v.size : 0;
    for (int k = 0; k < size && k < n; k++) {
        const struct pub *p = &v.st[k];
        struct fb_watchdog_rank *o = &out[k];
        memset(o, 0, sizeof *o);
        o->rank = k;
        o->reported = v.got[k];
        if (!o->reported)
            continue;
        o->working = !p->waiting;
        o->age_s = p->since;
        snprintf(o->host, sizeof o->host, "%s", p->host);
        snprintf(o->bench, sizeof o->bench, "%s", p->bench);
        snprintf(o->point, sizeof o->point, "%s", p->point);
        snprintf(o->phase, sizeof o->phase, "%s", p->phase);
    }
    pthread_mutex_unlock(&view_mu);
    return size < n ? size : n;
}

int fb_watchdog_view_line(char *buf, size_t len)
{
    struct fb_watchdog_rank *r;
    int size, working = 0, silent = 0;
    size_t used = 0;

    buf[0] = '\0';
    pthread_mutex_lock(&view_mu);
    size = v.done ? v.size : 0;
    pthread_mutex_unlock(&view_mu);
    if (size <= 1 || !(r = calloc((size_t)size, sizeof *r)))
        return 0;
    size = fb_watchdog_view(r, size);
    for (int k = 0; k < size; k++) {
        if (!r[k].reported) {
            silent++;
            continue;
        }
        if (!r[k].working)
            continue;
        if (working++ < VIEW_LISTED && used < len)
            used += (size_t)snprintf(buf + used, len - used, "%srank %d on %s working in '%s'"
                                     " of %s %s for %.1f s", working > 1 ? ", " : "the job's "
                                     "view: ", k, r[k].host, r[k].phase,
                                     r[k].bench[0] ? r[k].bench : "-", r[k].point, r[k].age_s);
    }
    if (working > VIEW_LISTED && used < len)
        used += (size_t)snprintf(buf + used, len - used, ", and %d more", working - VIEW_LISTED);
    if (!working && used < len)
        used += (size_t)snprintf(buf + used, len - used, "the job's view: every rank that "
                                 "answered waits in MPI (a link, or a rank stuck inside MPI)");
    if (silent && used < len)
        snprintf(buf + used, len - used, "; %d rank(s) sent no state within %.0f s (dead, "
                 "frozen, or cut off)", silent, VIEW_WAIT_S);
    free(r);
    return working;
}
