/* The watchdog thread, the phases and their deadlines, and the signal flag.
 * The main thread publishes its phase (a mutex-guarded copy for this process's thread, and a
 * slot of the node board, watchdog_board.c, for the other ranks of the node); the thread wakes
 * every 50 ms, and never calls MPI except MPI_Abort when it stops the job. The run's own record
 * (env.json, results.csv) is the layer above's: it registers a stop hook (job/run_record.c;
 * the hooks and the guards are in watchdog_hooks.c). */
#define _GNU_SOURCE
#include "watchdog.h"

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
#include "watchdog_impl.h"

/* How long a rank other than 0 that timed out leaves rank 0 to stop the job (and mark the run)
 * before it stops the job itself, and how long rank 0 leaves the other ranks' watchdogs to
 * print their lines before MPI_Abort takes them. */
static const double leave_others_s = 1.0;
static double leave_rank0_s = 5.0; /* under fb_watchdog_self.mu */
/* How long rank 0, whose own phase timed out, waits before it stops the job: leave_others_s, or
 * longer while a deputy may write what rank 0 owns (fb_watchdog_hold_rank0). */
static double hold_rank0_s = 0.0; /* under fb_watchdog_self.mu */

struct fb_watchdog_self fb_watchdog_self = {.mu = PTHREAD_MUTEX_INITIALIZER};

static struct {
    bool started, mpi_up, stop; /* stop: under fb_watchdog_self.mu */
    double timeout_s;
    char command[16];
    pthread_t thread;
    pthread_cond_t cv;
    /* test hook FB_TEST_HANG */
    int hang_rank;
    char hang_bench[24], hang_phase[64];
} wd = {.hang_rank = -1};

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

static void vset(char *buf, size_t len, const char *fmt, va_list ap)
{
    vsnprintf(buf, len, fmt, ap);
}

void fb_watchdog_point(const char *bench, const char *fmt, ...)
{
    va_list ap;

    pthread_mutex_lock(&fb_watchdog_self.mu);
    snprintf(fb_watchdog_self.me.bench, sizeof fb_watchdog_self.me.bench, "%s", bench ? bench : "");
    va_start(ap, fmt);
    vset(fb_watchdog_self.me.point, sizeof fb_watchdog_self.me.point, fmt, ap);
    va_end(ap);
    fb_watchdog_publish_locked();
    pthread_mutex_unlock(&fb_watchdog_self.mu);
}

static void hang_forever(void)
{
    fb_warn("test hook FB_TEST_HANG: rank %d hangs in %s '%s' (on purpose)",
            fb_watchdog_self.rank, fb_watchdog_self.me.bench[0] ? fb_watchdog_self.me.bench : "-",
            fb_watchdog_self.me.phase);
    for (;;)
        pause();
}

void fb_watchdog_phase(const char *fmt, ...)
{
    va_list ap;
    bool hang;

    pthread_mutex_lock(&fb_watchdog_self.mu);
    va_start(ap, fmt);
    vset(fb_watchdog_self.me.phase, sizeof fb_watchdog_self.me.phase, fmt, ap);
    va_end(ap);
    fb_watchdog_self.me.seq++;
    fb_watchdog_self.me.waiting = 0;
    fb_watchdog_self.me.since = fb_clock_now_s();
    fb_watchdog_publish_locked();
    hang = wd.hang_rank == fb_watchdog_self.rank && wd.mpi_up &&
           (!wd.hang_bench[0] || strcmp(wd.hang_bench, fb_watchdog_self.me.bench) == 0) &&
           strncmp(fb_watchdog_self.me.phase, wd.hang_phase, strlen(wd.hang_phase)) == 0;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    if (hang)
        hang_forever();
}

/* Called around every collective call of a benchmark's iteration: two relaxed stores, no
 * lock, so a 2 us all-reduce is not slowed down. Readers take `waiting` as a hint. */
static void set_waiting(int32_t v)
{
    struct pub *slot = __atomic_load_n(&fb_watchdog_self.slot, __ATOMIC_ACQUIRE);

    __atomic_store_n(&fb_watchdog_self.me.waiting, v, __ATOMIC_RELAXED);
    if (slot)
        __atomic_store_n(&slot->waiting, v, __ATOMIC_RELAXED);
}

void fb_watchdog_wait_begin(void) { set_waiting(1); }
void fb_watchdog_wait_end(void) { set_waiting(0); }

bool fb_watchdog_expired(void)
{
    bool late;

    pthread_mutex_lock(&fb_watchdog_self.mu);
    late = wd.started && wd.timeout_s > 0 &&
           fb_clock_now_s() - fb_watchdog_self.me.since > wd.timeout_s;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    return late;
}

/* ---- expiry ---- */

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
    pthread_mutex_lock(&fb_watchdog_self.mu);
    me = fb_watchdog_self.me;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    snprintf(rec, sizeof rec, "%s, during '%s' of %s %s", why, me.phase,
             me.bench[0] ? me.bench : "-", me.point);
    fb_error("%s; stopping the job (exit code 1)", rec);
    fb_watchdog_run_hooks();
    fb_watchdog_stop_hook("failed", rec);
    stop_job(1);
}

_Noreturn static void expire(const char *what, const struct pub *other)
{
    struct pub me;
    char mine[256], missing[2048], detail[3800];
    double now = fb_clock_now_s();
    int seen = 0, n;

    if (__atomic_exchange_n(&fired_once, 1, __ATOMIC_ACQ_REL)) {
        for (;;) /* another thread of this process is stopping the job */
            pause();
    }
    pthread_mutex_lock(&fb_watchdog_self.mu);
    fb_watchdog_self.me.fired = 1;
    fb_watchdog_publish_locked();
    me = fb_watchdog_self.me;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    fb_watchdog_describe(&me, now, mine, sizeof mine);
    fb_watchdog_run_hooks();

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

    /* the other hosts' ranks tell rank 0 where they are (MPI_THREAD_MULTIPLE only) */
    fb_watchdog_view_exchange(&me);
    n = fb_watchdog_not_arrived(me.phase, missing, sizeof missing, &seen);
    if (n)
        snprintf(detail, sizeof detail, "%s", missing);
    else if (fb_watchdog_self.nodes > 1 && fb_watchdog_elsewhere(me.phase, missing,
                                                                 sizeof missing) > 0)
        snprintf(detail, sizeof detail, "all %d rank(s) on %s had arrived; %s", seen, me.host,
                 missing);
    else
        snprintf(detail, sizeof detail, "all %d rank(s) had arrived and wait at a collective "
                 "that does not complete (the transport, or a rank stuck inside MPI)", seen);
    if (other)
        snprintf(detail + strlen(detail), sizeof detail - strlen(detail),
                 " (rank %d on %s ran out of time first)", other->rank, other->host);

    if (fb_watchdog_self.rank == 0) {
        char rec[4000], view[1200];
        fb_watchdog_view_line(view, sizeof view);
        if (view[0])
            snprintf(detail + strlen(detail), sizeof detail - strlen(detail), "; %s", view);
        fb_error("timeout: %s did not end within --timeout %g s; %s; rank 0 on %s is %s",
                 what, wd.timeout_s, detail, me.host, mine);
        snprintf(rec, sizeof rec, "%s did not end within --timeout %g s; %s", what,
                 wd.timeout_s, detail);
        fb_watchdog_stop_hook("timeout", rec);
        pthread_mutex_lock(&fb_watchdog_self.mu);
        double hold = hold_rank0_s;
        pthread_mutex_unlock(&fb_watchdog_self.mu);
        if (hold > leave_others_s)
            fb_error("stopping the job in %.0f s (another rank may still write what this rank "
                     "could not): the run is marked 'timeout' in env.json, results.csv holds "
                     "every finished point; exit code %d", hold, FB_EXIT_TIMEOUT);
        else
            fb_error("stopping the job: the run is marked 'timeout' in env.json, results.csv "
                     "holds every finished point; exit code %d", FB_EXIT_TIMEOUT);
        fb_clock_sleep_s(hold > leave_others_s ? hold : leave_others_s);
    } else {
        /* Speak only when there is something to say: a culprit (not at a wait), or the first
         * rank of a host for its host; then leave rank 0 the time to mark the run. */
        if (!me.waiting || fb_watchdog_self.local_rank == 0)
            fb_error("timeout: %s did not end within --timeout %g s; this rank is %s%s%s", what,
                     wd.timeout_s, mine, fb_watchdog_self.local_rank == 0 ? "; on this host, " : "",
                     fb_watchdog_self.local_rank == 0 ? detail : "");
        pthread_mutex_lock(&fb_watchdog_self.mu);
        double leave = leave_rank0_s;
        pthread_mutex_unlock(&fb_watchdog_self.mu);
        fb_clock_sleep_s(leave);
    }
    stop_job(FB_EXIT_TIMEOUT);
}

void fb_watchdog_leave_rank0(double seconds)
{
    pthread_mutex_lock(&fb_watchdog_self.mu);
    leave_rank0_s = seconds > 5.0 ? seconds : 5.0;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
}

void fb_watchdog_hold_rank0(double seconds)
{
    pthread_mutex_lock(&fb_watchdog_self.mu);
    hold_rank0_s = seconds > 0.0 ? seconds : 0.0;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
}

_Noreturn void fb_watchdog_expire(const char *what)
{
    char label[200];

    pthread_mutex_lock(&fb_watchdog_self.mu);
    snprintf(label, sizeof label, "%s (%s)", fb_watchdog_self.me.phase, what);
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    expire(label, NULL);
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

        due = fb_clock_timespec(fb_clock_now_s() + 0.05);
        pthread_mutex_lock(&fb_watchdog_self.mu);
        if (!wd.stop)
            pthread_cond_timedwait(&wd.cv, &fb_watchdog_self.mu, &due);
        stop = wd.stop;
        since = fb_watchdog_self.me.since;
        pthread_mutex_unlock(&fb_watchdog_self.mu);
        if (stop)
            break;
        fb_watchdog_heartbeat();

        if ((sig = got_signal) != 0) {
            if (signal_at == 0.0) {
                signal_at = fb_clock_now_s();
                if (fb_watchdog_self.rank == 0) {
                    char d[160];
                    snprintf(d, sizeof d, "%s received; the run stopped at its next check",
                             sig == SIGINT ? "SIGINT" : "SIGTERM");
                    fb_warn("%s: stopping at the next check; the finished points are kept",
                            sig == SIGINT ? "SIGINT" : "SIGTERM");
                    /* Marked now: mpirun gives its ranks 1 s after SIGTERM before SIGKILL. */
                    fb_watchdog_stop_hook("interrupted", d);
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
            pthread_mutex_lock(&fb_watchdog_self.mu);
            if (fb_watchdog_self.me.mpi_start)
                snprintf(what, sizeof what, "MPI start");
            else if (fb_watchdog_self.me.bench[0])
                snprintf(what, sizeof what, "%s %s, phase '%s',", fb_watchdog_self.me.bench,
                         fb_watchdog_self.me.point, fb_watchdog_self.me.phase);
            else
                snprintf(what, sizeof what, "phase '%s'", fb_watchdog_self.me.phase);
            pthread_mutex_unlock(&fb_watchdog_self.mu);
            expire(what, NULL);
        }
        if (++tick % 20 == 0) {
            char why[400];
            if (fb_watchdog_hooks_failed(why, sizeof why))
                guard_failed(why);
        }
        if (fb_watchdog_self.rank == 0 && fb_watchdog_neighbour_fired(&other)) {
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
    fb_watchdog_self.rank = 0;
    for (size_t i = 0; i < sizeof hint / sizeof hint[0]; i++)
        if (getenv(hint[i]) && *getenv(hint[i])) {
            fb_watchdog_self.rank = atoi(getenv(hint[i]));
            break;
        }
    fb_watchdog_self.me.rank = fb_watchdog_self.rank;
    fb_watchdog_self.me.pid = (int32_t)getpid();
    fb_watchdog_self.me.mpi_start = 1;
    fb_watchdog_self.me.since = fb_clock_now_s();
    snprintf(fb_watchdog_self.me.phase, sizeof fb_watchdog_self.me.phase, "MPI start");
    if (gethostname(fb_watchdog_self.me.host, sizeof fb_watchdog_self.me.host - 1) != 0)
        snprintf(fb_watchdog_self.me.host, sizeof fb_watchdog_self.me.host, "unknown");
    for (size_t i = 0; i < sizeof hint / sizeof hint[0]; i++)
        if (getenv(hint[i]) && *getenv(hint[i])) {
            /* "[rank host]" from the start */
            fb_log_set_identity(fb_watchdog_self.rank, fb_watchdog_self.me.host);
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
        slow_rank == fb_watchdog_self.rank) {
        fprintf(stderr, "fabricbench: test hook FB_TEST_SLOW_START: rank %d starts %s s late\n",
                fb_watchdog_self.rank, secs);
        fb_clock_sleep_s(atof(secs));
    }
    fb_watchdog_wait_begin(); /* arrived at MPI_Init */
    return FB_OK;
}

void fb_watchdog_mpi_ready(void)
{
    pthread_mutex_lock(&fb_watchdog_self.mu);
    wd.mpi_up = true;
    fb_watchdog_self.me.mpi_start = 0;
    fb_watchdog_self.me.waiting = 0;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    install_handlers();
    fb_watchdog_phase("start");
}

void fb_watchdog_finalizing(void)
{
    fb_watchdog_phase("MPI_Finalize");
    pthread_mutex_lock(&fb_watchdog_self.mu);
    wd.mpi_up = false;
    pthread_mutex_unlock(&fb_watchdog_self.mu);
}

void fb_watchdog_stop(void)
{
    if (!wd.started)
        return;
    pthread_mutex_lock(&fb_watchdog_self.mu);
    wd.stop = true;
    pthread_cond_signal(&wd.cv);
    pthread_mutex_unlock(&fb_watchdog_self.mu);
    pthread_join(wd.thread, NULL);
    wd.started = false;
    fb_watchdog_on_stop(NULL, NULL);
}
