/* Timing one case: who takes part, warm-up, calibration of the iterations a trial needs, the
 * timed trials (and a collective's iterations one by one), a collective's trials timed OSU's
 * way (--timing synced: a barrier before each iteration), and verification after timing.
 * Ranks that a case leaves idle still take part in its barriers.
 *
 * An iteration may be a collective call (or a pair's message), so a rank whose iteration failed
 * must not leave the others waiting in the next one: within a batch it makes its remaining
 * calls all the same (the collectives enter MPI even after a failed local step, coll_mpi.c),
 * and the barriers between batches, trials and synced iterations carry a failure flag, so every
 * rank stops at the same barrier; the failure is then agreed (fb_world_agree), which names the
 * rank and its error. */
#define _POSIX_C_SOURCE 200809L
#include "runner_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "watchdog.h"

bool fb_runner_is_active(const struct fb_case *c, int rank)
{
    if (rank >= c->group)
        return false;
    if (c->pair && c->stride > 0) /* the pair on every node at once */
        return rank % c->stride == c->active || rank % c->stride == c->peer;
    if (c->partners) /* disjoint pairs at once */
        return c->partners[rank] >= 0;
    return c->active == FB_ALL_RANKS || c->active == rank || (c->pair && c->peer == rank);
}

/* Whether every rank of the world takes part in case c: then nobody waits quietly, and the
 * measuring ranks' own communicator (fb_world_barrier_start's second round) is the world's. */
static bool all_take_part(const struct fb_case *c, int size)
{
    return c->group == size && c->active == FB_ALL_RANKS && !c->partners;
}

bool fb_runner_synced(const struct fb_options *o, const struct fb_case *c)
{
    return c->report == FB_REPORT_COLLECTIVE && strcmp(o->timing, "batch") != 0;
}

bool fb_runner_batched(const struct fb_options *o, const struct fb_case *c)
{
    return c->report != FB_REPORT_COLLECTIVE || strcmp(o->timing, "synced") != 0;
}

fb_status fb_runner_test_slow(const char *text, int *rank, double *us, char *why, size_t len)
{
    int n = 0;

    *rank = -1;
    *us = 0.0;
    if (!text || !*text)
        return FB_OK;
    if (sscanf(text, "%d:%lf%n", rank, us, &n) != 2 || text[n] || *rank < 0 || !(*us >= 1.0) ||
        *us > 1e7) {
        snprintf(why, len, "FB_TEST_SLOW_RANK='%s': expected R:US (a rank, then microseconds "
                 "from 1 to 1e7)", text);
        *rank = -1;
        *us = 0.0;
        return FB_ERR_USAGE;
    }
    return FB_OK;
}

/* One iteration of the benchmark; with FB_TEST_SLOW_RANK naming this rank, a sleep before it. */
static fb_status iterate(const struct fb_runner *r, const struct fb_bench *b, void *state)
{
    if (r->slow_rank == r->s->world.rank) {
        struct timespec ts = {(time_t)(r->slow_us / 1e6),
                              (long)(fmod(r->slow_us, 1e6) * 1e3)};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    return b->iterate(state);
}

/* `n` iterations; after a failed one the rest are still made (their calls matched on the
 * other ranks), and the first failure is returned. */
static fb_status iterate_n(const struct fb_runner *r, const struct fb_bench *b, void *state, long n)
{
    fb_status st = FB_OK;

    for (long i = 0; i < n; i++) {
        fb_status got = iterate(r, b, state);
        st = st != FB_OK ? st : got;
    }
    return st;
}

/* Times `iters` iterations between two events; returns microseconds per iteration. */
static fb_status time_iters(const struct fb_runner *r, const struct fb_bench *b, void *state,
                            struct fb_stream *stream, struct fb_event *ev[2], long iters,
                            double *us)
{
    const struct fb_backend *be = r->s->be;
    fb_status st;
    double total = 0.0;

    if ((st = be->event_record(ev[0], stream)) != FB_OK) {
        fb_status rest = iterate_n(r, b, state, iters); /* the batch's calls, all the same */
        (void)rest;
        return st;
    }
    fb_backend_scope_hook("iterate");
    /* the batch is the latency's loop: only the benchmark's call in it, unless a test slows
     * this rank; after a failure the remaining calls are still made (the file's head) */
    if (r->slow_rank != r->s->world.rank) {
        for (long i = 0; i < iters; i++)
            if ((st = b->iterate(state)) != FB_OK) {
                fb_status rest = iterate_n(r, b, state, iters - i - 1);
                (void)rest; /* the first failure is the one reported */
                return st;
            }
    } else if ((st = iterate_n(r, b, state, iters)) != FB_OK) {
        return st;
    }
    fb_backend_scope_hook("timing");
    if ((st = be->event_record(ev[1], stream)) != FB_OK || (st = be->stream_sync(stream)) != FB_OK ||
        (st = be->event_elapsed_us(ev[0], ev[1], &total)) != FB_OK)
        return st;
    *us = total / (double)iters;
    return FB_OK;
}

/* Times `n` iterations one by one with the n + 1 events ev[] (made and agreed on beforehand,
 * so a rank that could not make them never leaves the others in a collective call): an event
 * between every two, all enqueued back to back so the stream never waits for the host;
 * microseconds of each into us[]. After a failure the remaining iterations are still made. */
static fb_status time_each(const struct fb_runner *r, const struct fb_bench *b, void *state,
                           struct fb_stream *stream, struct fb_event **ev, long n, double *us)
{
    const struct fb_backend *be = r->s->be;
    fb_status st = be->event_record(ev[0], stream);

    for (long i = 0; i < n; i++) {
        fb_status got;
        fb_backend_scope_hook("iterate");
        got = iterate(r, b, state);
        fb_backend_scope_hook("timing");
        if (got == FB_OK && st == FB_OK)
            got = be->event_record(ev[i + 1], stream);
        st = st != FB_OK ? st : got;
    }
    if (st == FB_OK)
        st = be->stream_sync(stream);
    for (long i = 0; i < n && st == FB_OK; i++)
        st = be->event_elapsed_us(ev[i], ev[i + 1], &us[i]);
    return st;
}

/* OSU's way (--timing synced): before each of `iters` iterations a barrier, outside the time;
 * then the iteration alone on this rank, from the monotonic clock before it is issued to the
 * end of its stream, or, for an iteration that is one call (FB_ONE_CALL) which the collectives
 * table stamped whole, that call's own span; *us: this rank's mean. Collective: ranks that sit
 * the case out enter the barriers quietly. An interruption (a signal) or a failure on any rank
 * reaches every rank at the same barrier, and all stop there. */
static fb_status time_synced(const struct fb_runner *r, const struct fb_bench *b, void *state,
                             struct fb_stream *stream, bool active, long iters,
                             fb_status before, double *us, bool *interrupted)
{
    const struct fb_world *w = &r->s->world;
    bool one_call = (b->needs & FB_ONE_CALL) != 0;
    double total = 0.0;
    fb_status st = before; /* a failure of an earlier trial stops this one at its first barrier */

    if (interrupted)
        *interrupted = false;
    for (long i = 0; i < iters; i++) {
        double t0, took, call;
        bool failed = false;
        fb_status met = fb_world_barrier_failed(w->comm, !active, st != FB_OK, &failed);
        if (met == FB_ERR_INTERRUPTED) {
            /* told on every rank at this barrier, whatever else each saw: all stop */
            if (interrupted)
                *interrupted = true;
            return st == FB_OK ? FB_ERR_INTERRUPTED : st;
        }
        if (met != FB_OK && st == FB_OK)
            st = met; /* the barrier itself failed (MPI): kept, not a zero figure */
        if (failed)
            break; /* a rank failed: every rank stops here, the failure agreed by the caller */
        if (!active)
            continue;
        fb_backend_scope_hook("iterate");
        if (one_call)
            fb_call_span_clear(); /* armed until the take below */
        t0 = fb_clock_now_us();
        if ((st = iterate(r, b, state)) == FB_OK) {
            fb_backend_scope_hook("timing");
            st = r->s->be->stream_sync(stream);
        }
        took = fb_clock_now_us() - t0;
        /* the library's call alone where the table stamped it whole (coll.h), as OSU times it */
        total += (one_call && fb_call_span_take(&call)) ? call : took;
    }
    *us = total / (double)iters;
    return st;
}

long fb_calib_first(const struct fb_case *c) { return c->min_iters > 1 ? c->min_iters : 1; }

long fb_calib_next(long n, double batch_us, double target_us, bool *again)
{
    if (n * 4 > MAX_ITERS)
        return 0;
    /* a batch that is long enough: once more, unless it took a whole trial already */
    if (batch_us >= target_us / 5) {
        if (batch_us >= target_us)
            return 0;
        *again = true;
        return n;
    }
    return n * 4;
}

long fb_calib_iters(double per_iter_us, double target_us, long min_iters)
{
    long n = per_iter_us > 0.0 ? (long)ceil(target_us / per_iter_us) : MAX_ITERS;

    n = n < min_iters ? min_iters : n;
    return n < 1 ? 1 : n > MAX_ITERS ? MAX_ITERS : n;
}

/* How many iterations fill a trial of --trial-ms: batches of 1, 4, 16, ... iterations are timed
 * until one lasts a fifth of a trial, so a single iteration caught by a hiccup cannot decide;
 * that batch is then timed once more and the faster of the two counts: a hiccup that ended the
 * doubling early (1 ms in a batch of 16 ping-pongs) would otherwise cut every trial to a few
 * dozen iterations, each trial then paying its start (the barrier's skew) in every iteration.
 * The slowest rank decides each round, so every rank runs the same count; never fewer than the
 * case's min_iters, and the first round is that many. Collective. */
static fb_status calibrate(struct fb_runner *r, const struct fb_bench *b,
                           const struct fb_case *c, void *state, struct fb_stream *stream,
                           struct fb_event *ev[2], bool active, long *iters)
{
    const struct fb_world *w = &r->s->world;
    double target_us = r->opt->trial_ms * 1e3, per_iter = 0.0, slowest;
    fb_status st = FB_OK;

    /* The first batch is already the case's least count: a case whose work runs ahead of its
     * iterations (a ring that workers fill) can hand over a batch made beforehand, and with one
     * iteration a batch that waited for its work and a second look that found the next one
     * ready set the count by the ready one (0.5 us against 4 ms: 38,388 iterations of 4 ms in
     * every trial of cpu_t1, a run of half an hour, seen under load in compare_host's runs,
     * 2026-12-04) */
    bool again = false;
    for (long n = fb_calib_first(c); n > 0;) {
        double us = 0.0;
        fb_watchdog_phase("calibration (%ld iterations)", n);
        if (active && st == FB_OK)
            st = time_iters(r, b, state, stream, ev, n, &us);
        fb_world_barrier(w->comm, !active);
        if ((st = fb_world_agree(w, st)) != FB_OK)
            return st;
        fb_watchdog_wait_begin();
        MPI_Allreduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, w->comm);
        fb_watchdog_wait_end();
        if (again) { /* the second look at the deciding batch */
            per_iter = slowest < per_iter ? slowest : per_iter;
            break;
        }
        per_iter = slowest;
        n = fb_calib_next(n, slowest * (double)n, target_us, &again);
    }
    *iters = fb_calib_iters(per_iter, target_us, c->min_iters);
    return FB_OK;
}

/* How many iterations fill a synced trial of --trial-ms, barriers included: rounds of 1, 4, 16,
 * ... synced iterations until one lasts a fifth of a trial by the slowest rank's wall clock.
 * Not the batch count: with a barrier each, an iteration of nanoseconds (a collective on one
 * rank) costs the barrier's microseconds, and a barrier that an idle rank enters between naps
 * (up to 2 ms) far more, so the batch count would stretch a trial a thousandfold. Collective. */
static fb_status calibrate_synced(struct fb_runner *r, const struct fb_bench *b,
                                  const struct fb_case *c, void *state,
                                  struct fb_stream *stream, bool active, long *iters)
{
    const struct fb_world *w = &r->s->world;
    double target_us = r->opt->trial_ms * 1e3, slowest = 0.0, per_iter;
    long n = 1;
    fb_status st;

    for (;; n *= 4) {
        double us, wall = fb_clock_now_us();
        fb_watchdog_phase("synced calibration (%ld iterations)", n);
        st = time_synced(r, b, state, stream, active, n, FB_OK, &us, NULL);
        wall = fb_clock_now_us() - wall;
        if ((st = fb_world_agree(w, st)) != FB_OK)
            return st;
        fb_watchdog_wait_begin();
        MPI_Allreduce(&wall, &slowest, 1, MPI_DOUBLE, MPI_MAX, w->comm);
        fb_watchdog_wait_end();
        if (slowest >= target_us / 5 || n * 4 > MAX_ITERS)
            break;
    }
    per_iter = slowest / (double)n;
    *iters = per_iter > 0.0 ? (long)ceil(target_us / per_iter) : MAX_ITERS;
    if (*iters < c->min_iters)
        *iters = c->min_iters;
    *iters = *iters < 1 ? 1 : *iters > MAX_ITERS ? MAX_ITERS : *iters;
    return FB_OK;
}

/* After trial t: the benchmark's figures about it, into m->trial[t]. */
static fb_status trial_values(const struct fb_bench *b, void *state, struct measured *m, size_t t)
{
    struct fb_value v[FB_MAX_VALUES];
    size_t n = 0;
    fb_status st;

    fb_backend_scope_hook("trial_values");
    st = b->trial_values(state, m->iters, v, &n);

    n = n < FB_MAX_VALUES ? n : FB_MAX_VALUES;
    for (size_t i = 0; st == FB_OK && i < n; i++) {
        m->trial[t * FB_MAX_VALUES + i] = v[i].value;
        m->values[i] = v[i];
    }
    m->nvalues = n;
    return st;
}

fb_status fb_runner_measure(struct fb_runner *r, const struct fb_bench *b, const struct fb_ctx *ctx,
                            const struct fb_case *c, struct measured *m)
{
    const struct fb_backend *be = r->s->be;
    const struct fb_options *o = r->opt;
    const struct fb_world *w = &r->s->world;
    bool active = fb_runner_is_active(c, w->rank), everyone = all_take_part(c, w->size);
    struct fb_stream *stream = NULL;
    struct fb_event *ev[2] = {NULL, NULL};
    void *state = NULL;
    fb_status st = FB_OK;
    /* the case's measuring ranks, for the second round of each trial's start barrier
     * (fb_world_barrier_start): the world when every rank measures */
    MPI_Comm timed = MPI_COMM_NULL;

    fb_watchdog_phase("setup");
    if (everyone)
        timed = w->comm;
    else if (MPI_Comm_split(w->comm, active ? 0 : MPI_UNDEFINED, w->rank, &timed) != MPI_SUCCESS) {
        timed = MPI_COMM_NULL; /* unspecified after a failure: nothing to free */
        st = FB_ERR_MPI;
    }
    /* host-strict: the stream and events made from here are this case's */
    fb_backend_scope_case(b->name, c->name);
    if (active && st == FB_OK && ((st = be->stream_create(&stream)) != FB_OK ||
                   (st = be->event_create(&ev[0])) != FB_OK ||
                   (st = be->event_create(&ev[1])) != FB_OK))
        fb_error("%s %s: no stream or events: %s", b->name, c->name, fb_status_str(st));
    /* Agreed before setup: a setup may wait on a partner (p2p swaps IPC handles). */
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    /* (a rank whose partner failed says nothing: the partner names its own failure) */
    if (active && (st = b->setup(ctx, c, stream, &state)) != FB_OK && st != FB_ERR_UNSUPPORTED &&
        st != FB_ERR_PEER)
        fb_error("%s %s: setup of %zu bytes failed: %s", b->name, c->name, c->bytes,
                 fb_status_str(st));
    if ((st = fb_world_agree(w, st)) != FB_OK) {
        /* A point this machine cannot measure (a pair without peer access) is waived. */
        if (st == FB_ERR_UNSUPPORTED && w->rank == 0)
            fb_warn("%s %s %zu bytes waived: not possible between these ranks", b->name, c->name,
                    c->bytes);
        goto out;
    }

    if (b->needs & FB_REPORTS_VALUES) {
        /* Nothing to time: the figures were found by setup. */
        fb_watchdog_phase("values");
        m->nvalues = 0;
        fb_backend_scope_hook("values");
        if (active && (st = b->values(state, m->values, &m->nvalues)) != FB_OK)
            fb_error("%s %s: %s", b->name, c->name, fb_status_str(st));
        st = fb_world_agree(w, st);
        goto out;
    }

    /* Warm-up: first touches, lazy connection setup and clock ramps stay out of the timing. */
    fb_watchdog_phase("warm-up");
    fb_backend_scope_hook("iterate");
    if (active)
        st = iterate_n(r, b, state, o->warmup);
    if (active && st == FB_OK)
        st = be->stream_sync(stream);
    fb_world_barrier(w->comm, !active);
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    if (o->iters > 0)
        m->iters = o->iters;
    else if (fb_runner_batched(o, c) &&
             (st = calibrate(r, b, c, state, stream, ev, active, &m->iters)) != FB_OK)
        goto out;

    for (long t = 0; fb_runner_batched(o, c) && t < o->trials; t++) {
        bool failed = false;
        /* Start every trial together, so concurrent cases really overlap and a collective
         * is not charged for a late starter. Ranks that sit the case out wait quietly. */
        fb_watchdog_phase("trial %ld/%ld", t + 1, o->trials);
        /* interrupted or failed on any rank (every rank learns it here together): the other
         * trials are skipped by all */
        fb_status met = fb_world_barrier_start(w->comm, timed, !active, st != FB_OK, &failed);
        if (met != FB_OK && st == FB_OK)
            st = met; /* interrupted, or the barrier itself failed */
        if (failed || met == FB_ERR_INTERRUPTED)
            break;
        if (active && st == FB_OK)
            st = time_iters(r, b, state, stream, ev, m->iters, &m->samples[t]);
        if (active && st == FB_OK && b->trial_values)
            st = trial_values(b, state, m, (size_t)t);
    }
    fb_world_barrier(w->comm, !active);
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;

    /* --timing synced|both: the same trials OSU's way, each iteration alone between barriers.
     * Every rank runs all of them (the barriers are collective); a failure is agreed after. */
    m->synced_iters = o->iters > 0 ? o->iters : 0;
    if (fb_runner_synced(o, c) && !m->synced_iters &&
        (st = calibrate_synced(r, b, c, state, stream, active, &m->synced_iters)) != FB_OK)
        goto out;
    for (long t = 0; fb_runner_synced(o, c) && t < o->trials; t++) {
        fb_status got;
        bool interrupted = false;
        fb_watchdog_phase("synced trial %ld/%ld", t + 1, o->trials);
        got = time_synced(r, b, state, stream, active, m->synced_iters, st,
                          &m->synced[t], &interrupted);
        st = st != FB_OK ? st : got;
        if (interrupted)
            break; /* every rank learnt it at the same barrier */
    }
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;

    /* A collective's spread from one iteration to the next (a slow member, a jittery link)
     * hides in a trial's average: time up to MAX_EACH iterations one by one, no more than the
     * trials themselves took. */
    m->neach = 0;
    if (c->report == FB_REPORT_COLLECTIVE && fb_runner_batched(o, c)) {
        struct fb_event *each_ev[MAX_EACH + 1] = {NULL};
        m->neach = m->iters * o->trials < MAX_EACH ? m->iters * o->trials : MAX_EACH;
        fb_watchdog_phase("per-iteration timing");
        for (long i = 0; active && st == FB_OK && i <= m->neach; i++)
            st = be->event_create(&each_ev[i]);
        /* every rank has its events, or none times: agreed before the first collective call */
        if ((st = fb_world_agree(w, st)) == FB_OK) {
            fb_world_barrier_start(w->comm, timed, !active, false, NULL);
            if (active)
                st = time_each(r, b, state, stream, each_ev, m->neach, m->each);
            fb_world_barrier(w->comm, !active);
            st = fb_world_agree(w, st);
        }
        for (long i = 0; i <= m->neach; i++)
            be->event_destroy(each_ev[i]);
        if (st != FB_OK)
            goto out;
    }

    fb_watchdog_phase("verify");
    fb_backend_scope_hook("verify");
    if (active && (st = b->verify(state, &m->wrong)) != FB_OK)
        fb_error("%s %s: verification could not run: %s", b->name, c->name, fb_status_str(st));
    st = fb_world_agree(w, st);
out:
    fb_backend_scope_hook("teardown");
    if (b->teardown)
        b->teardown(state);
    be->event_destroy(ev[0]);
    be->event_destroy(ev[1]);
    be->stream_destroy(stream);
    if (timed != MPI_COMM_NULL && timed != w->comm)
        MPI_Comm_free(&timed);
    fb_backend_scope_case(NULL, NULL);
    return st;
}
