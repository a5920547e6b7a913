/* The node board: a shared-memory window over the ranks of a node (MPI_Win_allocate_shared)
 * where each rank's main thread publishes its phase in a slot of its own (a seqlock) and its
 * watchdog thread a heartbeat, so that any rank's watchdog can read the whole node with plain
 * loads, without MPI, and name the ranks that had not arrived, are frozen, or whose watchdog
 * fired first. Beside it the rank-to-host map names the ranks on other hosts. */
#define _GNU_SOURCE
#include "watchdog.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "watchdog_impl.h"

enum { MAX_LISTED = 16 };

static struct {
    MPI_Win win;
    struct pub *board; /* local_size slots, NULL without */
} bd = {.win = MPI_WIN_NULL};

/* Held by the watchdog thread while it reads the board, and by fb_watchdog_detach while it takes
 * the board away (before MPI_Win_free unmaps it): a reader that saw the board finishes with it
 * first. (Unheld, rank 0's thread once read a slot of a board already freed: a segmentation
 * fault after a refused --out, CI.) Taken before fb_watchdog_self.mu where both are. */
static pthread_mutex_t board_mu = PTHREAD_MUTEX_INITIALIZER;

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

void fb_watchdog_heartbeat(void)
{
    int64_t ms = (int64_t)(fb_clock_now_s() * 1000.0);

    /* under mu: the slot cannot be unmapped (fb_watchdog_detach) while it is written */
    pthread_mutex_lock(&fb_watchdog_self.mu);
    __atomic_store_n(&fb_watchdog_self.me.beat_ms, ms, __ATOMIC_RELAXED);
    if (fb_watchdog_self.slot)
        __atomic_store_n(&fb_watchdog_self.slot->beat_ms, ms, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&fb_watchdog_self.mu);
}

/* One slot of the board (or this rank's own state without a board), by index. */
static bool read_rank(int k, struct pub *p)
{
    if (bd.board)
        return read_slot(&bd.board[k], p);
    pthread_mutex_lock(&fb_watchdog_self.mu);
    *p = fb_watchdog_self.me;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    return true;
}

/* The ranks of this node that had not arrived: working (not at a collective wait), gone, or
 * frozen (a wait counts only while the rank lives: a rank stopped inside a collective, SIGSTOP,
 * published "waiting" before it stopped, but its watchdog thread no longer ticks). */
int fb_watchdog_not_arrived(const char *phase, char *buf, size_t len, int *seen)
{
    double now = fb_clock_now_s();
    size_t used = 0;
    int n = 0;

    buf[0] = '\0';
    *seen = 0;
    pthread_mutex_lock(&board_mu);
    for (int k = 0; k < (bd.board ? fb_watchdog_self.local_size : 1); k++) {
        struct pub p;
        char what[256], why[64];
        double silent;
        bool gone, frozen;

        if (!read_rank(k, &p))
            continue;
        (*seen)++;
        gone = p.pid > 0 && kill(p.pid, 0) != 0 && errno == ESRCH;
        silent = p.beat_ms > 0 ? now - (double)p.beat_ms / 1000.0 : 0.0;
        frozen = !gone && silent > FB_WATCHDOG_FROZEN_S;
        if (p.waiting && !gone && !frozen)
            continue;
        if (n++ >= MAX_LISTED)
            continue;
        fb_watchdog_describe(&p, now, what, sizeof what);
        if (gone)
            snprintf(why, sizeof why, "process gone; it was ");
        else if (frozen)
            snprintf(why, sizeof why, "frozen: no sign of life for %.0f s; it was ", silent);
        else
            why[0] = '\0';
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used,
                                     "%srank %d on %s did not arrive at '%s' (%s%s)",
                                     n > 1 ? "; " : "", p.rank, p.host, phase, why, what);
    }
    pthread_mutex_unlock(&board_mu);
    if (n > MAX_LISTED && used < len)
        snprintf(buf + used, len - used, "; and %d more", n - MAX_LISTED);
    return n;
}

void fb_watchdog_set_hosts(const char (*hosts)[64], int size)
{
    char(*copy)[64] = NULL, (*old)[64];

    if (hosts && size > 0 && (copy = malloc((size_t)size * sizeof *copy)))
        memcpy(copy, hosts, (size_t)size * sizeof *copy);
    pthread_mutex_lock(&fb_watchdog_self.mu);
    old = fb_watchdog_self.hosts;
    fb_watchdog_self.hosts = copy;
    if (copy)
        fb_watchdog_self.size = size;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    free(old);
}

int fb_watchdog_elsewhere(const char *phase, char *buf, size_t len)
{
    int size, nlocal, named = 0, runs = 0;
    size_t used = 0;
    bool *local;

    buf[0] = '\0';
    pthread_mutex_lock(&fb_watchdog_self.mu);
    size = fb_watchdog_self.hosts ? fb_watchdog_self.size : 0;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    if (size <= 0 || !(local = calloc((size_t)size, sizeof *local)))
        return 0;
    pthread_mutex_lock(&board_mu);
    nlocal = bd.board ? fb_watchdog_self.local_size : 1;
    for (int k = 0; k < nlocal; k++) {
        struct pub p;
        if (read_rank(k, &p) && p.rank >= 0 && p.rank < size)
            local[p.rank] = true;
    }
    pthread_mutex_unlock(&board_mu);
    pthread_mutex_lock(&fb_watchdog_self.mu);
    /* runs of consecutive ranks on one host: "rank 1 on b", "ranks 4-7 on c" */
    for (int r = 0; r < size && fb_watchdog_self.hosts; r++) {
        int last = r;
        if (local[r])
            continue;
        while (last + 1 < size && !local[last + 1] &&
               strcmp(fb_watchdog_self.hosts[last + 1], fb_watchdog_self.hosts[r]) == 0)
            last++;
        named += last - r + 1;
        if (runs++ < MAX_LISTED && used < len) {
            if (last == r)
                used += (size_t)snprintf(buf + used, len - used, "%srank %d on %s",
                                         runs > 1 ? ", " : "", r, fb_watchdog_self.hosts[r]);
            else
                used += (size_t)snprintf(buf + used, len - used, "%sranks %d-%d on %s",
                                         runs > 1 ? ", " : "", r, last, fb_watchdog_self.hosts[r]);
        } else if (runs == MAX_LISTED + 1 && used < len) {
            used += (size_t)snprintf(buf + used, len - used, ", ...");
        }
        r = last;
    }
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    free(local);
    if (named == 1 && used < len)
        snprintf(buf + used, len - used, " did not arrive at '%s' (another host: this rank "
                 "cannot see its state; its own line, if one comes, says what it was doing)",
                 phase);
    else if (named > 1 && used < len)
        snprintf(buf + used, len - used, ": one or more of them did not arrive at '%s' (other "
                 "hosts: this rank cannot see their state; their own lines, if any come, say "
                 "which)", phase);
    return named;
}

/* Rank 0's thread: a rank of this node whose watchdog fired (it entered its phase earlier). */
bool fb_watchdog_neighbour_fired(struct pub *out)
{
    bool fired = false;

    pthread_mutex_lock(&board_mu);
    for (int k = 0; !fired && bd.board && k < fb_watchdog_self.local_size; k++)
        fired = &bd.board[k] != fb_watchdog_self.slot && read_slot(&bd.board[k], out) &&
                out->fired;
    pthread_mutex_unlock(&board_mu);
    return fired;
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
    pthread_mutex_lock(&board_mu); /* no reader is inside the board past this */
    bd.board = NULL;
    pthread_mutex_unlock(&board_mu);
    pthread_mutex_lock(&fb_watchdog_self.mu);
    fb_watchdog_self.slot = NULL;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    if (bd.win != MPI_WIN_NULL) {
        fb_watchdog_phase("board release");
        fb_watchdog_wait_begin();
        MPI_Win_free(&bd.win);
        fb_watchdog_wait_end();
    }
}
