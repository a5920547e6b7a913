/* The watchdog's private header, for its own files only (watchdog.c: the thread, the phases and
 * the signal flag; watchdog_board.c: the node board; watchdog_hooks.c: the guards and the stop
 * hook): the state the thread and the board share, and what each file calls in another. The
 * layers above use watchdog.h. */
#ifndef FB_WATCHDOG_IMPL_H
#define FB_WATCHDOG_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One rank's published state: this process's copy, and its slot in the node board. */
struct pub {
    uint32_t gen;     /* board slot: odd while being written */
    int32_t rank, pid;
    int32_t waiting;  /* at the collective wait that ends the phase */
    int32_t fired;    /* this rank's watchdog ran out of time */
    int32_t mpi_start;/* before MPI_Init returned */
    uint64_t seq;     /* phase number: every rank walks the same phases */
    int64_t beat_ms;  /* the watchdog thread's last tick, CLOCK_MONOTONIC ms (a sign of life) */
    double since;     /* CLOCK_MONOTONIC seconds the phase began (one clock per node) */
    char host[64];
    char bench[24];
    char point[96];
    char phase[64];
};

/* This rank as the thread and the board see it: its published state and who it is (set by
 * fb_watchdog_start, then fb_watchdog_attach). Defined in watchdog.c. */
struct fb_watchdog_self {
    int rank, size, nodes, local_rank, local_size;
    pthread_mutex_t mu; /* guards me and watchdog.c's stop */
    struct pub me;
    struct pub *slot;  /* this rank's slot of the node board, NULL without */
    char (*hosts)[64]; /* every rank's host (fb_watchdog_set_hosts), NULL before; under mu */
};
extern struct fb_watchdog_self fb_watchdog_self;

/* ---- the node board (watchdog_board.c) ---- */

/* With fb_watchdog_self.mu held: copies fb_watchdog_self.me into this rank's board slot, if it
 * has one. */
void fb_watchdog_publish_locked(void);

/* One line on what rank `p` is doing and for how long at `now`, into buf (len bytes). */
void fb_watchdog_describe(const struct pub *p, double now, char *buf, size_t len);

/* A rank whose watchdog thread has not ticked for this long is frozen (SIGSTOP, a stopped
 * debugger, a process the kernel does not run): it ticks every 50 ms. */
#define FB_WATCHDOG_FROZEN_S 2.0

/* The watchdog thread: a sign of life in this rank's slot (beat_ms). */
void fb_watchdog_heartbeat(void);

/* The watchdog thread, or the main thread in fb_watchdog_expire: the ranks of this node that had
 * not arrived at `phase` (working, gone, or frozen: read from the board without MPI; without a
 * board, this rank alone), described into buf (len bytes): "rank 1 on vm did not arrive at
 * 'trial 2/2' (...)". Returns how many; *seen is how many slots were read. */
int fb_watchdog_not_arrived(const char *phase, char *buf, size_t len, int *seen);

/* When every rank of this node had arrived: the ranks on other hosts (the rank-to-host map,
 * fb_watchdog_set_hosts), grouped by host, into buf: "rank 1 on nodeb did not arrive at 'x'
 * (...)". Returns how many ranks it names (0 without a map or other hosts). */
int fb_watchdog_elsewhere(const char *phase, char *buf, size_t len);

/* Rank 0's thread: whether another rank of this node had its watchdog fire; its state into
 * *out (caller's). */
bool fb_watchdog_neighbour_fired(struct pub *out);

/* ---- the job's view (watchdog_view.c) ---- */

/* As this rank's watchdog stops the job, with fb_watchdog_share_view's communicator: a rank
 * other than 0 sends its state `me` to rank 0; rank 0 gathers the others' (up to 3 s), for
 * fb_watchdog_view. Nothing without a view. */
void fb_watchdog_view_exchange(const struct pub *me);

/* ---- the guards and the stop hook (watchdog_hooks.c) ---- */

/* The watchdog thread, as it stops the job: calls the stop hook of fb_watchdog_on_stop, if one
 * is set, with the end state and its detail. */
void fb_watchdog_stop_hook(const char *state, const char *detail);

/* As the job is stopped: calls every guard's abort_fn and forgets them. Returns with the guards'
 * lock held, for good: nothing may free what a guard releases. */
void fb_watchdog_run_hooks(void);

/* The watchdog thread: the first failure a guard's failed_fn reports, into why (len bytes);
 * false when none. */
bool fb_watchdog_hooks_failed(char *why, size_t len);

#endif
