/* The node board: a shared-memory window over the ranks of a node (MPI_Win_allocate_shared)
 * where each rank's main thread publishes its phase in a slot of its own (a seqlock), so that
 * any rank's watchdog can read the whole node with plain loads, without MPI, and name the ranks
 * that had not arrived or whose watchdog fired first. */
#define _GNU_SOURCE
#include "watchdog.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "watchdog_impl.h"

enum { MAX_LISTED = 16 };

static struct {
    MPI_Win win;
    struct pub *board; /* local_size slots, NULL without */
} bd = {.win = MPI_WIN_NULL};

/* ---- publishing ---- */

/* Main thread, with fb_watchdog_self.mu held: copies me into the board slot (a seqlock: readers
 * retry while gen is odd or changed). */
void fb_watchdog_publish_locked(void)
{
    if (!fb_watchdog_self.slot)
        return;
    __atomic_add_fetch(&fb_watchdog_self.slot->gen, 1, __ATOMIC_ACQ_REL);
    {
        uint32_t gen = fb_watchdog_self.slot->gen;
        memcpy((char *)fb_watchdog_self.slot + sizeof gen,
               (char *)&fb_watchdog_self.me + sizeof gen, sizeof fb_watchdog_self.me - sizeof gen);
    }
    __atomic_add_fetch(&fb_watchdog_self.slot->gen, 1, __ATOMIC_ACQ_REL);
}

static bool read_slot(const struct pub *slot, struct pub *out)
{
    for (int tries = 0; tries < 100; tries++) {
        uint32_t g1 = __atomic_load_n(&slot->gen, __ATOMIC_ACQUIRE), g2;
        if (g1 & 1) {
            sched_yield();
            continue;
        }
        memcpy(out, slot, sizeof *out);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        g2 = __atomic_load_n(&slot->gen, __ATOMIC_ACQUIRE);
        if (g1 == g2)
            return true;
    }
    return false;
}

/* ---- reading the node ---- */

/* "working in 'trial 2/10' of allreduce out_of_place 8 bytes on 2 rank(s) for 5.0 s" */
void fb_watchdog_describe(const struct pub *p, double now, char *buf, size_t len)
{
    const char *how = p->mpi_start ? (p->waiting ? "waiting in MPI_Init" : "not yet in MPI_Init")
                                   : (p->waiting ? "waiting at a collective" : "working");
    if (p->bench[0])
        snprintf(buf, len, "%s in '%s' of %s %s for %.1f s", how, p->phase, p->bench, p->point,
                 now - p->since);
    else
        snprintf(buf, len, "%s in '%s' for %.1f s", how, p->phase, now - p->since);
}

/* The ranks of this node that had not arrived: working (not at a collective wait), or gone.
 * Writes "rank 1 (host: in 'trial 3/10' ..., working for 5.0 s); ..." into buf; returns how
 * many; *seen is how many slots were read. Without a board: this rank alone. */
int fb_watchdog_not_arrived(char *buf, size_t len, int *seen)
{
    double now = fb_clock_now_s();
    size_t used = 0;
    int n = 0;

    buf[0] = '\0';
    *seen = 0;
    for (int k = 0; k < (bd.board ? fb_watchdog_self.local_size : 1); k++) {
        struct pub p;
        char what[256];
        bool gone;

        if (bd.board) {
            if (!read_slot(&bd.board[k], &p))
                continue;
        } else {
            pthread_mutex_lock(&fb_watchdog_self.mu);
            p = fb_watchdog_self.me;
            pthread_mutex_unlock(&fb_watchdog_self.mu);
        }
        (*seen)++;
        gone = p.pid > 0 && kill(p.pid, 0) != 0 && errno == ESRCH;
        if (p.waiting && !gone)
            continue;
        if (n++ >= MAX_LISTED)
            continue;
        fb_watchdog_describe(&p, now, what, sizeof what);
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used, "%srank %d on %s (%s%s)",
                                     n > 1 ? "; " : "", p.rank, p.host,
                                     gone ? "process gone; it was " : "", what);
    }
    if (n > MAX_LISTED && used < len)
        snprintf(buf + used, len - used, "; and %d more", n - MAX_LISTED);
    return n;
}

/* Rank 0's thread: a rank of this node whose watchdog fired (it entered its phase earlier). */
bool fb_watchdog_neighbour_fired(struct pub *out)
{
    for (int k = 0; bd.board && k < fb_watchdog_self.local_size; k++)
        if (&bd.board[k] != fb_watchdog_self.slot && read_slot(&bd.board[k], out) && out->fired)
            return true;
    return false;
}

/* ---- making and freeing the board ---- */

fb_status fb_watchdog_attach(MPI_Comm node_comm, const struct fb_watchdog_who *w)
{
    MPI_Aint size;
    int disp;
    struct pub *base = NULL;
    fb_status st = FB_OK;

    pthread_mutex_lock(&fb_watchdog_self.mu);
    fb_watchdog_self.rank = w->rank;
    fb_watchdog_self.size = w->size;
    fb_watchdog_self.nodes = w->nodes;
    fb_watchdog_self.local_rank = w->local_rank;
    fb_watchdog_self.local_size = w->local_size;
    fb_watchdog_self.me.rank = w->rank;
    snprintf(fb_watchdog_self.me.host, sizeof fb_watchdog_self.me.host, "%s", w->host);
    pthread_mutex_unlock(&fb_watchdog_self.mu);

    /* Every rank of the node gets one slot; rank k of the node reads slot k of the first. */
    if (MPI_Win_allocate_shared((MPI_Aint)sizeof(struct pub), 1, MPI_INFO_NULL, node_comm,
                                &base, &bd.win) != MPI_SUCCESS) {
        bd.win = MPI_WIN_NULL;
        st = FB_ERR_MPI;
    } else if (MPI_Win_shared_query(bd.win, 0, &size, &disp, &bd.board) != MPI_SUCCESS) {
        bd.board = NULL;
        st = FB_ERR_MPI;
    }
    if (st == FB_OK) {
        pthread_mutex_lock(&fb_watchdog_self.mu);
        fb_watchdog_self.slot = base;
        fb_watchdog_publish_locked();
        pthread_mutex_unlock(&fb_watchdog_self.mu);
    }
    /* every slot written before any rank reads the board */
    MPI_Barrier(node_comm);
    if (st != FB_OK) {
        bd.board = NULL;
        if (w->local_rank == 0)
            fb_warn("watchdog: no shared-memory board on host %s: a timeout names this rank "
                    "only", w->host);
    }
    return FB_OK;
}

void fb_watchdog_detach(void)
{
    pthread_mutex_lock(&fb_watchdog_self.mu);
    bd.board = NULL;
    fb_watchdog_self.slot = NULL;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    if (bd.win != MPI_WIN_NULL) {
        fb_watchdog_phase("board release");
        fb_watchdog_wait_begin();
        MPI_Win_free(&bd.win);
        fb_watchdog_wait_end();
    }
}
