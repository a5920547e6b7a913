/* The watchdog thread, the phase board and the signal flag.
 * The main thread publishes its phase (a mutex-guarded copy for this process's thread, and a
 * slot of the node board for the other ranks of the node); the thread wakes every 50 ms, and
 * never calls MPI except MPI_Abort when it stops the job. The run's own record (env.json,
 * results.csv) is the layer above's: it registers a stop hook (job/run_record.c). */
#define _GNU_SOURCE
#include "watchdog.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"

enum { MAX_HOOKS = 64, MAX_LISTED = 16 };

/* How long a rank other than 0 that timed out leaves rank 0 to stop the job (and mark the run)
 * before it stops the job itself, and how long rank 0 leaves the other ranks' watchdogs to
 * print their lines before MPI_Abort takes them. */
static const double leave_rank0_s = 5.0, leave_others_s = 1.0;

/* One rank's published state: this process's copy, and its slot in the node board. */
struct pub {
    uint32_t gen;     /* board slot: odd while being written */
    int32_t rank, pid;
    int32_t waiting;  /* at the collective wait that ends the phase */
    int32_t fired;    /* this rank's watchdog ran out of time */
    int32_t mpi_start;/* before MPI_Init returned */
    uint64_t seq;     /* phase number: every rank walks the same phases */
    double since;     /* CLOCK_MONOTONIC seconds the phase began (one clock per node) */
    char host[64];
    char bench[24];
    char point[96];
    char phase[64];
};

static struct {
    bool started, mpi_up, stop;
    double timeout_s;
    char command[16];
    int rank, size, nodes, local_rank, local_size;
    pthread_t thread;
    pthread_mutex_t mu; /* guards me and stop */
    pthread_cond_t cv;
    struct pub me;
    /* the node board */
    MPI_Win win;
    struct pub *board; /* local_size slots, NULL without */
    struct pub *slot;  /* this rank's */
    /* test hook FB_TEST_HANG */
    int hang_rank;
    char hang_bench[24], hang_phase[64];
    /* rank 0's run */
    pthread_mutex_t stop_mu;
    void (*stop_fn)(void *, const char *, const char *);
    void *stop_arg;
    /* abort hooks */
    pthread_mutex_t hooks_mu;
    struct { void (*abort_fn)(void *); bool (*failed_fn)(void *, char *, size_t); void *arg; } hooks[MAX_HOOKS];
    int nhooks;
} wd = {.mu = PTHREAD_MUTEX_INITIALIZER,
        .stop_mu = PTHREAD_MUTEX_INITIALIZER,
        .hooks_mu = PTHREAD_MUTEX_INITIALIZER,
        .hang_rank = -1,
        .win = MPI_WIN_NULL};

static volatile sig_atomic_t got_signal;
static int fired_once; /* __atomic: the first expiry wins */

static void on_signal(int sig) { got_signal = sig; }

static void install_handlers(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

int fb_watchdog_interrupted(void) { return got_signal; }

/* ---- publishing ---- */

/* Main thread, with wd.mu held: copies me into the board slot (a seqlock: readers retry while
 * gen is odd or changed). */
static void publish_locked(void)
{
    if (!wd.slot)
        return;
    __atomic_add_fetch(&wd.slot->gen, 1, __ATOMIC_ACQ_REL);
    {
        uint32_t gen = wd.slot->gen;
        memcpy((char *)wd.slot + sizeof gen, (char *)&wd.me + sizeof gen,
               sizeof wd.me - sizeof gen);
    }
    __atomic_add_fetch(&wd.slot->gen, 1, __ATOMIC_ACQ_REL);
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

static void vset(char *buf, size_t len, const char *fmt, va_list ap)
{
    vsnprintf(buf, len, fmt, ap);
}

void fb_watchdog_point(const char *bench, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&wd.mu);
    snprintf(wd.me.bench, sizeof wd.me.bench, "%s", bench ? bench : "");
    va_start(ap, fmt);
    vset(wd.me.point, sizeof wd.me.point, fmt, ap);
    va_end(ap);
    publish_locked();
    pthread_mutex_unlock(&wd.mu);
}

static void hang_forever(void)
{
    fb_warn("test hook FB_TEST_HANG: rank %d hangs in %s '%s' (on purpose)", wd.rank,
            wd.me.bench[0] ? wd.me.bench : "-", wd.me.phase);
    for (;;)
        pause();
}

void fb_watchdog_phase(const char *fmt, ...)
{
    va_list ap;
    bool hang;

    pthread_mutex_lock(&wd.mu);
    va_start(ap, fmt);
    vset(wd.me.phase, sizeof wd.me.phase, fmt, ap);
    va_end(ap);
    wd.me.seq++;
    wd.me.waiting = 0;
    wd.me.since = fb_clock_now_s();
    publish_locked();
    hang = wd.hang_rank == wd.rank && wd.mpi_up &&
           (!wd.hang_bench[0] || strcmp(wd.hang_bench, wd.me.bench) == 0) &&
           strncmp(wd.me.phase, wd.hang_phase, strlen(wd.hang_phase)) == 0;
    pthread_mutex_unlock(&wd.mu);
    if (hang)
        hang_forever();
}

/* Called around every collective call of a benchmark's iteration: two relaxed stores, no
 * lock, so a 2 us all-reduce is not slowed down. Readers take `waiting` as a hint. */
static void set_waiting(int32_t v)
{
    struct pub *slot = __atomic_load_n(&wd.slot, __ATOMIC_ACQUIRE);

    __atomic_store_n(&wd.me.waiting, v, __ATOMIC_RELAXED);
    if (slot)
        __atomic_store_n(&slot->waiting, v, __ATOMIC_RELAXED);
}

void fb_watchdog_wait_begin(void) { set_waiting(1); }
void fb_watchdog_wait_end(void) { set_waiting(0); }

bool fb_watchdog_expired(void)
{
    bool late;

    pthread_mutex_lock(&wd.mu);
    late = wd.started && wd.timeout_s > 0 && fb_clock_now_s() - wd.me.since > wd.timeout_s;
    pthread_mutex_unlock(&wd.mu);
    return late;
}

/* ---- the stop hook ---- */

void fb_watchdog_on_stop(void (*fn)(void *arg, const char *state, const char *detail), void *arg)
{
    pthread_mutex_lock(&wd.stop_mu);
    wd.stop_fn = fn;
    wd.stop_arg = arg;
    pthread_mutex_unlock(&wd.stop_mu);
}

/* The watchdog thread: tells the layer above how the run ends (held while it runs, so the hook
 * cannot be removed under it). */
static void stop_hook(const char *state, const char *detail)
{
    pthread_mutex_lock(&wd.stop_mu);
    if (wd.stop_fn)
        wd.stop_fn(wd.stop_arg, state, detail);
    pthread_mutex_unlock(&wd.stop_mu);
}

/* ---- abort hooks ---- */

bool fb_watchdog_guard(void (*abort_fn)(void *), bool (*failed_fn)(void *, char *, size_t),
                       void *arg)
{
    bool ok = false;

    pthread_mutex_lock(&wd.hooks_mu);
    if (wd.nhooks < MAX_HOOKS) {
        wd.hooks[wd.nhooks].abort_fn = abort_fn;
        wd.hooks[wd.nhooks].failed_fn = failed_fn;
        wd.hooks[wd.nhooks].arg = arg;
        wd.nhooks++;
        ok = true;
    }
    pthread_mutex_unlock(&wd.hooks_mu);
    return ok;
}

void fb_watchdog_forget(void *arg)
{
    pthread_mutex_lock(&wd.hooks_mu);
    for (int i = 0; i < wd.nhooks; i++)
        if (wd.hooks[i].arg == arg) {
            wd.hooks[i] = wd.hooks[--wd.nhooks];
            i--;
        }
    pthread_mutex_unlock(&wd.hooks_mu);
}

static void run_hooks(void)
{
    /* Held to the end: the job is being stopped, nothing may free what a hook releases. */
    pthread_mutex_lock(&wd.hooks_mu);
    for (int i = 0; i < wd.nhooks; i++)
        if (wd.hooks[i].abort_fn)
            wd.hooks[i].abort_fn(wd.hooks[i].arg);
    wd.nhooks = 0;
}

/* The first failure a guard reports, into why; false when none. */
static bool hooks_failed(char *why, size_t len)
{
    bool failed = false;

    pthread_mutex_lock(&wd.hooks_mu);
    for (int i = 0; i < wd.nhooks && !failed; i++)
        if (wd.hooks[i].failed_fn)
            failed = wd.hooks[i].failed_fn(wd.hooks[i].arg, why, len);
    pthread_mutex_unlock(&wd.hooks_mu);
    return failed;
}

/* ---- expiry ---- */

/* "working in 'trial 2/10' of allreduce out_of_place 8 bytes on 2 rank(s) for 5.0 s" */
static void describe(const struct pub *p, double now, char *buf, size_t len)
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
static int not_arrived(char *buf, size_t len, int *seen)
{
    double now = fb_clock_now_s();
    size_t used = 0;
    int n = 0;

    buf[0] = '\0';
    *seen = 0;
    for (int k = 0; k < (wd.board ? wd.local_size : 1); k++) {
        struct pub p;
        char what[256];
        bool gone;

        if (wd.board) {
            if (!read_slot(&wd.board[k], &p))
                continue;
        } else {
            pthread_mutex_lock(&wd.mu);
            p = wd.me;
            pthread_mutex_unlock(&wd.mu);
        }
        (*seen)++;
        gone = p.pid > 0 && kill(p.pid, 0) != 0 && errno == ESRCH;
        if (p.waiting && !gone)
            continue;
        if (n++ >= MAX_LISTED)
            continue;
        describe(&p, now, what, sizeof what);
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used, "%srank %d on %s (%s%s)",
                                     n > 1 ? "; " : "", p.rank, p.host,
                                     gone ? "process gone; it was " : "", what);
    }
    if (n > MAX_LISTED && used < len)
        snprintf(buf + used, len - used, "; and %d more", n - MAX_LISTED);
    return n;
}

static void alarm_exit(int sig)
{
    (void)sig;
    _exit(FB_EXIT_TIMEOUT);
}

/* Stops the job: MPI_Abort once MPI is up (it ends every rank), else this process. A bounded
 * MPI_Abort: SIGALRM ends the process if it does not return in 10 s. */
_Noreturn static void stop_job(int code)
{
    struct sigaction sa;

    fflush(NULL);
    if (wd.mpi_up) {
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = alarm_exit;
        sigaction(SIGALRM, &sa, NULL);
        alarm(10);
        MPI_Abort(MPI_COMM_WORLD, code);
    }
    _exit(code);
}

/* The first expiry of this process: from the thread (own deadline, or a rank of the node that
 * timed out first) or from the main thread (fb_watchdog_expire). */
_Noreturn static void expire(const char *what, const struct pub *other);

/* A guard reported a failure of its own (an NCCL communicator's asynchronous error): the main
 * thread is probably blocked on it for good; stop the job now, marked "failed". */
_Noreturn static void guard_failed(const char *why)
{
    struct pub me;
    char rec[600];

    if (__atomic_exchange_n(&fired_once, 1, __ATOMIC_ACQ_REL))
        for (;;)
            pause();
    pthread_mutex_lock(&wd.mu);
    me = wd.me;
    pthread_mutex_unlock(&wd.mu);
    snprintf(rec, sizeof rec, "%s, during '%s' of %s %s", why, me.phase,
             me.bench[0] ? me.bench : "-", me.point);
    fb_error("%s; stopping the job (exit code 1)", rec);
    run_hooks();
    stop_hook("failed", rec);
    stop_job(1);
}

_Noreturn static void expire(const char *what, const struct pub *other)
{
    struct pub me;
    char mine[256], missing[2048], detail[2600];
    double now = fb_clock_now_s();
    int seen = 0, n;

    if (__atomic_exchange_n(&fired_once, 1, __ATOMIC_ACQ_REL)) {
        for (;;) /* another thread of this process is stopping the job */
            pause();
    }
    pthread_mutex_lock(&wd.mu);
    wd.me.fired = 1;
    publish_locked();
    me = wd.me;
    pthread_mutex_unlock(&wd.mu);
    describe(&me, now, mine, sizeof mine);
    run_hooks();

    if (me.mpi_start) {
        /* No MPI: every rank speaks for itself; the late one is known by its line, or by its
         * silence when it never started at all. */
        if (me.waiting)
            fb_error("timeout: MPI start: MPI_Init has not returned after %.0f s on rank %d "
                     "(host %s): a rank of the job has not started or cannot connect; the late "
                     "rank is the one whose line says it had not reached MPI_Init, or the one "
                     "with no line; stopping (exit code %d)",
                     now - me.since, me.rank, me.host, FB_EXIT_TIMEOUT);
        else
            fb_error("timeout: MPI start: rank %d (host %s) had not reached MPI_Init after "
                     "%.0f s (a slow start); stopping (exit code %d)",
                     me.rank, me.host, now - me.since, FB_EXIT_TIMEOUT);
        stop_job(FB_EXIT_TIMEOUT);
    }

    n = not_arrived(missing, sizeof missing, &seen);
    if (n)
        snprintf(detail, sizeof detail, "not arrived: %s", missing);
    else if (wd.nodes > 1)
        snprintf(detail, sizeof detail, "all %d rank(s) on %s had arrived; the missing rank(s) "
                 "are on another host (see its lines; a host without one has no rank left that "
                 "can speak)", seen, me.host);
    else
        snprintf(detail, sizeof detail, "all %d rank(s) had arrived and wait at a collective "
                 "that does not complete (the transport, or a rank stuck inside MPI)", seen);
    if (other)
        snprintf(detail + strlen(detail), sizeof detail - strlen(detail),
                 " (rank %d on %s ran out of time first)", other->rank, other->host);

    if (wd.rank == 0) {
        char rec[3000];
        fb_error("timeout: %s did not end within --timeout %.0f s; %s; rank 0 on %s is %s",
                 what, wd.timeout_s, detail, me.host, mine);
        snprintf(rec, sizeof rec, "%s did not end within --timeout %.0f s; %s", what,
                 wd.timeout_s, detail);
        stop_hook("timeout", rec);
        fb_error("stopping the job: the run is marked 'timeout' in env.json, results.csv holds "
                 "every finished point; exit code %d", FB_EXIT_TIMEOUT);
        fb_clock_sleep_s(leave_others_s);
    } else {
        /* Speak only when there is something to say: a culprit (not at a wait), or the first
         * rank of a host for its host; then leave rank 0 the time to mark the run. */
        if (!me.waiting || wd.local_rank == 0)
            fb_error("timeout: %s did not end within --timeout %.0f s; this rank is %s%s%s", what,
                     wd.timeout_s, mine, wd.local_rank == 0 ? "; on this host, " : "",
                     wd.local_rank == 0 ? detail : "");
        fb_clock_sleep_s(leave_rank0_s);
    }
    stop_job(FB_EXIT_TIMEOUT);
}

_Noreturn void fb_watchdog_expire(const char *what)
{
    char label[200];

    pthread_mutex_lock(&wd.mu);
    snprintf(label, sizeof label, "%s (%s)", wd.me.phase, what);
    pthread_mutex_unlock(&wd.mu);
    expire(label, NULL);
}

/* Rank 0's thread: a rank of this node whose watchdog fired (it entered its phase earlier). */
static bool neighbour_fired(struct pub *out)
{
    for (int k = 0; wd.board && k < wd.local_size; k++)
        if (&wd.board[k] != wd.slot && read_slot(&wd.board[k], out) && out->fired)
            return true;
    return false;
}

static void *watch(void *arg)
{
    double signal_at = 0.0;
    unsigned tick = 0;
    (void)arg;

    for (;;) {
        struct timespec due;
        struct pub other;
        double since;
        bool stop, late;
        int sig;

        clock_gettime(CLOCK_MONOTONIC, &due);
        due.tv_nsec += 50 * 1000 * 1000;
        if (due.tv_nsec >= 1000000000L) {
            due.tv_sec++;
            due.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&wd.mu);
        if (!wd.stop)
            pthread_cond_timedwait(&wd.cv, &wd.mu, &due);
        stop = wd.stop;
        since = wd.me.since;
        pthread_mutex_unlock(&wd.mu);
        if (stop)
            break;

        if ((sig = got_signal) != 0) {
            if (signal_at == 0.0) {
                signal_at = fb_clock_now_s();
                if (wd.rank == 0) {
                    char d[160];
                    snprintf(d, sizeof d, "%s received; the run stopped at its next check",
                             sig == SIGINT ? "SIGINT" : "SIGTERM");
                    fb_warn("%s: stopping at the next check; the finished points are kept",
                            sig == SIGINT ? "SIGINT" : "SIGTERM");
                    /* Marked now: mpirun gives its ranks 1 s after SIGTERM before SIGKILL. */
                    stop_hook("interrupted", d);
                }
            } else if (fb_clock_now_s() - signal_at > FB_INTERRUPT_GRACE_S) {
                fb_error("%s: the run did not stop within %.0f s; ending this process (exit "
                         "code %d)", sig == SIGINT ? "SIGINT" : "SIGTERM",
                         FB_INTERRUPT_GRACE_S, FB_EXIT_INTERRUPTED);
                fflush(NULL);
                _exit(FB_EXIT_INTERRUPTED);
            }
        }
        late = wd.timeout_s > 0 && fb_clock_now_s() - since > wd.timeout_s;
        if (late) {
            char what[256];
            pthread_mutex_lock(&wd.mu);
            if (wd.me.mpi_start)
                snprintf(what, sizeof what, "MPI start");
            else if (wd.me.bench[0])
                snprintf(what, sizeof what, "%s %s, phase '%s',", wd.me.bench, wd.me.point,
                         wd.me.phase);
            else
                snprintf(what, sizeof what, "phase '%s'", wd.me.phase);
            pthread_mutex_unlock(&wd.mu);
            expire(what, NULL);
        }
        if (++tick % 20 == 0) {
            char why[400];
            if (hooks_failed(why, sizeof why))
                guard_failed(why);
        }
        if (wd.rank == 0 && neighbour_fired(&other)) {
            char what[256];
            if (other.bench[0])
                snprintf(what, sizeof what, "%s %s, phase '%s',", other.bench, other.point,
                         other.phase);
            else
                snprintf(what, sizeof what, "phase '%s'", other.phase);
            expire(what, &other);
        }
    }
    return NULL;
}

/* ---- start and stop ---- */

/* "RANK:SECONDS" or "RANK:BENCH:PHASE": false when absent or malformed (a warning). */
static bool test_hook(const char *name, int *rank, char *a, size_t alen, char *b, size_t blen)
{
    const char *v = getenv(name), *c1, *c2;

    if (!v || !*v)
        return false;
    c1 = strchr(v, ':');
    if (!c1 || c1 == v) {
        fb_warn("%s='%s' ignored: expected RANK:... (a test hook, docs/timeouts.md)", name, v);
        return false;
    }
    *rank = atoi(v);
    c2 = b ? strchr(c1 + 1, ':') : NULL;
    if (b && !c2) {
        fb_warn("%s='%s' ignored: expected RANK:BENCH:PHASE", name, v);
        return false;
    }
    snprintf(a, alen, "%.*s", (int)((c2 ? c2 : c1 + 1 + strlen(c1 + 1)) - (c1 + 1)), c1 + 1);
    if (b)
        snprintf(b, blen, "%s", c2 + 1);
    return true;
}

fb_status fb_watchdog_start(double timeout_s, const char *command)
{
    pthread_condattr_t ca;
    const char *hint[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    char secs[32];
    int slow_rank = -1;

    if (wd.started)
        return FB_OK;
    wd.timeout_s = timeout_s;
    snprintf(wd.command, sizeof wd.command, "%s", command);
    /* Before MPI_Init the rank is only what the launcher says (messages and test hooks). */
    wd.rank = 0;
    for (size_t i = 0; i < sizeof hint / sizeof hint[0]; i++)
        if (getenv(hint[i]) && *getenv(hint[i])) {
            wd.rank = atoi(getenv(hint[i]));
            break;
        }
    wd.me.rank = wd.rank;
    wd.me.pid = (int32_t)getpid();
    wd.me.mpi_start = 1;
    wd.me.since = fb_clock_now_s();
    snprintf(wd.me.phase, sizeof wd.me.phase, "MPI start");
    if (gethostname(wd.me.host, sizeof wd.me.host - 1) != 0)
        snprintf(wd.me.host, sizeof wd.me.host, "unknown");
    for (size_t i = 0; i < sizeof hint / sizeof hint[0]; i++)
        if (getenv(hint[i]) && *getenv(hint[i])) {
            fb_log_set_identity(wd.rank, wd.me.host); /* "[rank host]" from the start */
            break;
        }
    (void)test_hook("FB_TEST_HANG", &wd.hang_rank, wd.hang_bench, sizeof wd.hang_bench,
                    wd.hang_phase, sizeof wd.hang_phase);

    install_handlers();
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&wd.cv, &ca);
    pthread_condattr_destroy(&ca);
    if (pthread_create(&wd.thread, NULL, watch, NULL) != 0) {
        fb_warn("no watchdog thread: --timeout and the interrupt grace are not enforced");
        return FB_ERR_INTERNAL;
    }
    wd.started = true;

    if (test_hook("FB_TEST_SLOW_START", &slow_rank, secs, sizeof secs, NULL, 0) &&
        slow_rank == wd.rank) {
        fprintf(stderr, "fabricbench: test hook FB_TEST_SLOW_START: rank %d starts %s s late\n",
                wd.rank, secs);
        fb_clock_sleep_s(atof(secs));
    }
    fb_watchdog_wait_begin(); /* arrived at MPI_Init */
    return FB_OK;
}

void fb_watchdog_mpi_ready(void)
{
    pthread_mutex_lock(&wd.mu);
    wd.mpi_up = true;
    wd.me.mpi_start = 0;
    wd.me.waiting = 0;
    pthread_mutex_unlock(&wd.mu);
    install_handlers();
    fb_watchdog_phase("start");
}

fb_status fb_watchdog_attach(MPI_Comm node_comm, const struct fb_watchdog_who *w)
{
    MPI_Aint size;
    int disp;
    struct pub *base = NULL;
    fb_status st = FB_OK;

    pthread_mutex_lock(&wd.mu);
    wd.rank = w->rank;
    wd.size = w->size;
    wd.nodes = w->nodes;
    wd.local_rank = w->local_rank;
    wd.local_size = w->local_size;
    wd.me.rank = w->rank;
    snprintf(wd.me.host, sizeof wd.me.host, "%s", w->host);
    pthread_mutex_unlock(&wd.mu);

    /* Every rank of the node gets one slot; rank k of the node reads slot k of the first. */
    if (MPI_Win_allocate_shared((MPI_Aint)sizeof(struct pub), 1, MPI_INFO_NULL, node_comm,
                                &base, &wd.win) != MPI_SUCCESS) {
        wd.win = MPI_WIN_NULL;
        st = FB_ERR_MPI;
    } else if (MPI_Win_shared_query(wd.win, 0, &size, &disp, &wd.board) != MPI_SUCCESS) {
        wd.board = NULL;
        st = FB_ERR_MPI;
    }
    if (st == FB_OK) {
        pthread_mutex_lock(&wd.mu);
        wd.slot = base;
        publish_locked();
        pthread_mutex_unlock(&wd.mu);
    }
    /* every slot written before any rank reads the board */
    MPI_Barrier(node_comm);
    if (st != FB_OK) {
        wd.board = NULL;
        if (w->local_rank == 0)
            fb_warn("watchdog: no shared-memory board on host %s: a timeout names this rank "
                    "only", w->host);
    }
    return FB_OK;
}

void fb_watchdog_detach(void)
{
    pthread_mutex_lock(&wd.mu);
    wd.board = NULL;
    wd.slot = NULL;
    pthread_mutex_unlock(&wd.mu);
    if (wd.win != MPI_WIN_NULL) {
        fb_watchdog_phase("board release");
        fb_watchdog_wait_begin();
        MPI_Win_free(&wd.win);
        fb_watchdog_wait_end();
    }
}

void fb_watchdog_finalizing(void)
{
    fb_watchdog_phase("MPI_Finalize");
    pthread_mutex_lock(&wd.mu);
    wd.mpi_up = false;
    pthread_mutex_unlock(&wd.mu);
}

void fb_watchdog_stop(void)
{
    if (!wd.started)
        return;
    pthread_mutex_lock(&wd.mu);
    wd.stop = true;
    pthread_cond_signal(&wd.cv);
    pthread_mutex_unlock(&wd.mu);
    pthread_join(wd.thread, NULL);
    wd.started = false;
    fb_watchdog_on_stop(NULL, NULL);
}
