/* The watchdog: every phase of `run` and `doctor` (MPI start, communicator creation, each benchmark
 * phase, each collective wait) is bounded by --timeout. A thread per rank, armed before MPI_Init,
 * ends a phase that outlives its deadline: it names the phase, the benchmark and point, and the
 * ranks (and hosts) that had not arrived, and stops the job with exit code 3 (the layer that owns
 * the run marks it in env.json, through a stop hook). SIGINT and SIGTERM only raise a flag here;
 * the ranks agree on it at their next collective status check (fb_world_agree) and the run ends
 * "interrupted", exit code 4; the watchdog enforces a short grace. docs/timeouts.md explains the
 * design. */
#ifndef FB_WATCHDOG_H
#define FB_WATCHDOG_H

#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

#include "status.h"

enum {
    FB_EXIT_TIMEOUT = 3,     /* a phase outlived --timeout */
    FB_EXIT_INTERRUPTED = 4, /* SIGINT or SIGTERM */
};

/* --timeout's default, in seconds per phase (docs/timeouts.md says why). */
#define FB_TIMEOUT_DEFAULT_S 300.0
/* After SIGINT/SIGTERM the run has this long to stop at its next status check. */
#define FB_INTERRUPT_GRACE_S 2.0

/* Starts this process's watchdog thread and installs the SIGINT/SIGTERM handlers; the phase
 * is "MPI start" until fb_watchdog_mpi_ready. Call once, before MPI_Init. timeout_s <= 0: no
 * deadlines (signals are still handled). `command` ("run", "doctor") goes into messages.
 * Runs the test hook FB_TEST_SLOW_START (docs/timeouts.md). */
fb_status fb_watchdog_start(double timeout_s, const char *command);

/* MPI_Init has returned: later timeouts stop the job with MPI_Abort. Re-installs the signal
 * handlers (an MPI library may have set its own). */
void fb_watchdog_mpi_ready(void);

/* Who this rank is, once MPI has said (struct fb_world's fields; plain data, so the watchdog
 * sits below the world that calls it). */
struct fb_watchdog_who {
    int rank, size, nodes, local_rank, local_size;
    const char *host;
};

/* Collective over `node_comm` (the ranks of this node): this rank's identity, and the node board
 * (a shared-memory window over the node's ranks, MPI_Win_allocate_shared) where every rank
 * publishes its phase, so the watchdog of any rank of a node can name the ranks that had not
 * arrived without MPI. A board that cannot be made is a warning: messages then name this rank
 * only. */
fb_status fb_watchdog_attach(MPI_Comm node_comm, const struct fb_watchdog_who *who);

/* The rank-to-host map (fb_world_init gathers it): `size` host names, copied, so a timeout names
 * the ranks on other hosts that rank 0 cannot see. NULL forgets it. Thread-safe. */
void fb_watchdog_set_hosts(const char (*hosts)[64], int size);

/* Collective over the node: frees the board (fb_session_close calls it). */
void fb_watchdog_detach(void);

/* Main thread, just before MPI_Finalize: the last phase; from now on a timeout ends this
 * process (_exit) instead of calling MPI_Abort. */
void fb_watchdog_finalizing(void);

/* Stops and joins the thread (after MPI_Finalize); safe when never started. */
void fb_watchdog_stop(void);

/* Main thread: the benchmark and point now running ("" bench: none), kept until the next call.
 * printf-style point text, e.g. "out_of_place 1048576 bytes on 4 rank(s)". */
void fb_watchdog_point(const char *bench, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Main thread: a new phase begins ("warm-up", "trial 3/10", "gather"); its deadline is now +
 * timeout; this rank is working in it. Every rank walks the same phases in the same order, so
 * phase numbers compare across ranks. Runs the test hook FB_TEST_HANG. */
void fb_watchdog_phase(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Main thread: this rank has arrived at the collective wait that ends the current phase
 * (fb_world_agree, fb_world_barrier), and has left it. Deadlines are not restarted: a wait
 * counts in the phase it ends. */
void fb_watchdog_wait_begin(void);
void fb_watchdog_wait_end(void);

/* Main thread, while it polls a wait itself (NCCL): whether the phase's deadline has passed.
 * Then it releases what it holds and calls fb_watchdog_expire, which does not return. */
bool fb_watchdog_expired(void);
_Noreturn void fb_watchdog_expire(const char *what);

/* How long a rank other than 0 whose phase timed out leaves rank 0 to stop the job (and write
 * what it owns) before it stops the job itself: 5 s, or longer from now on (at least 5; 5 gives
 * the default back). locate's phase 1, where rank 0 judges the nodes that answered and names
 * the one that did not, gives rank 0 its own --timeout after its node's work. Thread-safe. */
void fb_watchdog_leave_rank0(double seconds);

/* How long rank 0, once its own phase timed out, waits before it stops the job: 1 s (its
 * default, for the other ranks' watchdogs to print their lines; 0 gives it back), or longer
 * from now on. locate's phase 1 holds rank 0 twice --timeout, so that when rank 0's own node
 * hangs a deputy rank still writes the node table of the others. Thread-safe. */
void fb_watchdog_hold_rank0(double seconds);

/* The job's view at a timeout. A node board shows a rank only its own node; where MPI gives
 * MPI_THREAD_MULTIPLE, the watchdog threads also tell rank 0 their state as they stop the job:
 * each rank's watchdog sends its phase and whether it was working or waiting at a collective, on
 * `comm` (a duplicate of the world's communicator that the caller made and owns, used for
 * nothing else), and rank 0's waits up to 3 s for them before it names the ranks still working
 * and calls the stop hook. Returns true when it took comm (the thread level is
 * MPI_THREAD_MULTIPLE), false otherwise (free it). MPI_COMM_NULL takes it back: true when the
 * caller may free it, false when a watchdog used it (the job is ending: leave it to
 * MPI_Finalize). Main thread. */
bool fb_watchdog_share_view(MPI_Comm comm);

/* One rank in rank 0's view: whether it sent its state, and that state (age_s: how long it had
 * been in the phase when it sent). working: not waiting at a collective or for a peer. */
struct fb_watchdog_rank {
    int rank;
    bool reported, working;
    double age_s;
    char host[64], bench[24], point[96], phase[64];
};

/* Rank 0, once its watchdog fired with a view shared (the stop hook may call it): the first n
 * ranks' states into out; the number filled, 0 when there is no view. Thread-safe. */
int fb_watchdog_view(struct fb_watchdog_rank *out, int n);

/* Rank 0: the view in one line ("the job's view: rank 3 on b working in 'trial 1/3' of ...", or
 * that every rank that answered waits in MPI; and how many sent nothing) into buf, "" without a
 * view. Returns the number of ranks working. */
int fb_watchdog_view_line(char *buf, size_t len);

/* Whether SIGINT or SIGTERM came (the signal number, or 0). Async-signal-safe to read. */
int fb_watchdog_interrupted(void);

/* What the layer that owns the run does when the watchdog ends it (a timeout, a guard's failure,
 * SIGINT or SIGTERM): `run` marks env.json and writes the points it holds (run_record.h). Called
 * from the watchdog thread, at most once per end, before the job is stopped, with the end state
 * ("timeout", "failed", "interrupted") and one line of where and why; it must not call MPI. One
 * hook per process: a later call replaces it, fn NULL removes it (waiting for a call under way,
 * so what the hook reads may be freed after). Thread-safe. */
void fb_watchdog_on_stop(void (*fn)(void *arg, const char *state, const char *detail), void *arg);

/* Something to watch and release (an NCCL communicator), from the watchdog thread:
 * - abort_fn(arg), when the job is stopped, before MPI_Abort: ncclCommAbort frees the GPU and
 *   the network and unblocks a stream wait;
 * - failed_fn(arg, why, len) (may be NULL), about once a second: true with a reason when the
 *   thing has failed on its own (ncclCommGetAsyncError); then the job is stopped at once (exit
 *   code 1, run marked "failed") instead of waiting for the deadline.
 * Both must be callable from another thread. At most 64 registered; false when full.
 * fb_watchdog_forget(arg) unregisters (call it before arg is freed). */
bool fb_watchdog_guard(void (*abort_fn)(void *), bool (*failed_fn)(void *, char *, size_t),
                       void *arg);
void fb_watchdog_forget(void *arg);

#endif
