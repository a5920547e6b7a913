/* The watchdog's guards and its stop hook: what the layers above hand it to release when the
 * job is stopped (an NCCL communicator's abort) or to poll for a failure of its own, and the
 * hook of the layer that owns the run (job/run_record.c), called as the run ends. Each under a
 * mutex of its own, apart from the thread's. */
#include "watchdog.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "watchdog_impl.h"

enum { MAX_HOOKS = 64 };

static struct {
    /* rank 0's run */
    pthread_mutex_t stop_mu;
    void (*stop_fn)(void *, const char *, const char *);
    void *stop_arg;
    /* abort hooks */
    pthread_mutex_t hooks_mu;
    struct {
        void (*abort_fn)(void *);
        bool (*failed_fn)(void *, char *, size_t);
        void *arg;
    } hooks[MAX_HOOKS];
    int nhooks;
} hk = {.stop_mu = PTHREAD_MUTEX_INITIALIZER, .hooks_mu = PTHREAD_MUTEX_INITIALIZER};

/* ---- the stop hook ---- */

void fb_watchdog_on_stop(void (*fn)(void *arg, const char *state, const char *detail), void *arg)
{
    pthread_mutex_lock(&hk.stop_mu);
    hk.stop_fn = fn;
    hk.stop_arg = arg;
    pthread_mutex_unlock(&hk.stop_mu);
}

/* The watchdog thread: tells the layer above how the run ends (held while it runs, so the hook
 * cannot be removed under it). */
void fb_watchdog_stop_hook(const char *state, const char *detail)
{
    pthread_mutex_lock(&hk.stop_mu);
    if (hk.stop_fn)
        hk.stop_fn(hk.stop_arg, state, detail);
    pthread_mutex_unlock(&hk.stop_mu);
}

/* ---- abort hooks ---- */

bool fb_watchdog_guard(void (*abort_fn)(void *), bool (*failed_fn)(void *, char *, size_t),
                       void *arg)
{
    bool ok = false;

    pthread_mutex_lock(&hk.hooks_mu);
    if (hk.nhooks < MAX_HOOKS) {
        hk.hooks[hk.nhooks].abort_fn = abort_fn;
        hk.hooks[hk.nhooks].failed_fn = failed_fn;
        hk.hooks[hk.nhooks].arg = arg;
        hk.nhooks++;
        ok = true;
    }
    pthread_mutex_unlock(&hk.hooks_mu);
    return ok;
}

void fb_watchdog_forget(void *arg)
{
    pthread_mutex_lock(&hk.hooks_mu);
    for (int i = 0; i < hk.nhooks; i++)
        if (hk.hooks[i].arg == arg) {
            hk.hooks[i] = hk.hooks[--hk.nhooks];
            i--;
        }
    pthread_mutex_unlock(&hk.hooks_mu);
}

void fb_watchdog_run_hooks(void)
{
    /* Held to the end: the job is being stopped, nothing may free what a hook releases. */
    pthread_mutex_lock(&hk.hooks_mu);
    for (int i = 0; i < hk.nhooks; i++)
        if (hk.hooks[i].abort_fn)
            hk.hooks[i].abort_fn(hk.hooks[i].arg);
    hk.nhooks = 0;
}

/* The first failure a guard reports, into why; false when none. */
bool fb_watchdog_hooks_failed(char *why, size_t len)
{
    bool failed = false;

    pthread_mutex_lock(&hk.hooks_mu);
    for (int i = 0; i < hk.nhooks && !failed; i++)
        if (hk.hooks[i].failed_fn)
            failed = hk.hooks[i].failed_fn(hk.hooks[i].arg, why, len);
    pthread_mutex_unlock(&hk.hooks_mu);
    return failed;
}
