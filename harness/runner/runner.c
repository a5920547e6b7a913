/* The runner. Every rank walks the same plan; the ranks that a case leaves idle still take part
 * in its barriers so that all ranks stay in step. */
#define _POSIX_C_SOURCE 200809L
#include "runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "run_record.h"
#include "units.h"
#include "watchdog.h"

enum { MAX_ITERS = 100000, MAX_EACH = 200 };

static const char *const dtype_names[] = {
    [FB_DTYPE_FLOAT32] = "float32", [FB_DTYPE_FLOAT64] = "float64", [FB_DTYPE_INT32] = "int32",
    [FB_DTYPE_FLOAT16] = "float16", [FB_DTYPE_INT8] = "int8"};

fb_status fb_runner_init(struct fb_runner *r, struct fb_session *s, const struct fb_options *opt,
                         struct fb_results *res)
{
    memset(r, 0, sizeof *r);
    r->s = s;
    r->opt = opt;
    r->res = res;
    if (!(r->node_of = malloc((size_t)s->world.size * sizeof *r->node_of)))
        return FB_ERR_NOMEM;
    MPI_Allgather(&s->world.node, 1, MPI_INT, r->node_of, 1, MPI_INT, s->world.comm);
    return FB_OK;
}

void fb_runner_release(struct fb_runner *r)
{
    if (r->coll_comm)
        r->s->coll->comm_destroy(r->coll_comm);
    free(r->node_of);
    free(r->links);
    free(r->rank_names);
    free(r->each_all);
    free(r->values_all);
    free(r->trial_all);
    memset(r, 0, sizeof *r);
}

/* One case's measurements on this rank. */
struct measured {
    double *samples; /* per trial: microseconds per iteration */
    long iters;
    double each[MAX_EACH]; /* collectives: iterations timed one by one, microseconds */
    long neach;
    size_t wrong;
    struct fb_value values[FB_MAX_VALUES]; /* FB_REPORTS_VALUES; trial_values' names */
    size_t nvalues;
    double *trial;   /* trial_values: [trial][FB_MAX_VALUES] */
};

static bool is_active(const struct fb_case *c, int rank)
{
    if (rank >= c->group)
        return false;
    if (c->pair && c->stride > 0) /* the pair on every node at once */
        return rank % c->stride == c->active || rank % c->stride == c->peer;
    return c->active == FB_ALL_RANKS || c->active == rank || (c->pair && c->peer == rank);
}

/* Whether every rank of the world takes part in case c: then nobody waits quietly and the
 * barriers can be MPI's blocking ones, which release all ranks closer together. */
static bool all_take_part(const struct fb_case *c, int size)
{
    return c->group == size && c->active == FB_ALL_RANKS;
}

/* Times `iters` iterations between two events; returns microseconds per iteration. */
static fb_status time_iters(const struct fb_bench *b, const struct fb_backend *be, void *state,
                            struct fb_stream *stream, struct fb_event *ev[2], long iters,
                            double *us)
{
    fb_status st;
    double total = 0.0;

    if ((st = be->event_record(ev[0], stream)) != FB_OK)
        return st;
    for (long i = 0; i < iters; i++)
        if ((st = b->iterate(state)) != FB_OK)
            return st;
    if ((st = be->event_record(ev[1], stream)) != FB_OK || (st = be->stream_sync(stream)) != FB_OK ||
        (st = be->event_elapsed_us(ev[0], ev[1], &total)) != FB_OK)
        return st;
    *us = total / (double)iters;
    return FB_OK;
}

/* Times `n` iterations one by one: an event between every two, all enqueued back to back so
 * the stream never waits for the host; microseconds of each into us[]. */
static fb_status time_each(const struct fb_bench *b, const struct fb_backend *be, void *state,
                           struct fb_stream *stream, long n, double *us)
{
    struct fb_event *ev[MAX_EACH + 1] = {NULL};
    fb_status st = FB_OK;

    for (long i = 0; i <= n && st == FB_OK; i++)
        st = be->event_create(&ev[i]);
    if (st == FB_OK)
        st = be->event_record(ev[0], stream);
    for (long i = 0; i < n && st == FB_OK; i++)
        if ((st = b->iterate(state)) == FB_OK)
            st = be->event_record(ev[i + 1], stream);
    if (st == FB_OK)
        st = be->stream_sync(stream);
    for (long i = 0; i < n && st == FB_OK; i++)
        st = be->event_elapsed_us(ev[i], ev[i + 1], &us[i]);
    for (long i = 0; i <= n; i++)
        be->event_destroy(ev[i]);
    return st;
}

/* How many iterations fill a trial of --trial-ms: batches of 1, 4, 16, ... iterations are timed
 * until one lasts a fifth of a trial, so a single iteration caught by a hiccup cannot decide.
 * The slowest rank decides each round, so every rank runs the same count. Collective. */
static fb_status calibrate(struct fb_runner *r, const struct fb_bench *b,
                           const struct fb_case *c, void *state, struct fb_stream *stream,
                           struct fb_event *ev[2], bool active, long *iters)
{
    const struct fb_world *w = &r->s->world;
    double target_us = r->opt->trial_ms * 1e3, per_iter = 0.0, batch_us, slowest;
    bool everyone = all_take_part(c, w->size);
    fb_status st = FB_OK;

    for (long n = 1;; n *= 4) {
        double us = 0.0;
        fb_watchdog_phase("calibration (%ld iterations)", n);
        if (active && st == FB_OK)
            st = time_iters(b, r->s->be, state, stream, ev, n, &us);
        fb_world_barrier(w->comm, !active, everyone);
        if ((st = fb_world_agree(w, st)) != FB_OK)
            return st;
        fb_watchdog_wait_begin();
        MPI_Allreduce(&us, &slowest, 1, MPI_DOUBLE, MPI_MAX, w->comm);
        fb_watchdog_wait_end();
        per_iter = slowest;
        batch_us = slowest * (double)n;
        if (batch_us >= target_us / 5 || n * 4 > MAX_ITERS)
            break;
    }
    *iters = per_iter > 0.0 ? (long)ceil(target_us / per_iter) : MAX_ITERS;
    *iters = *iters < 1 ? 1 : *iters > MAX_ITERS ? MAX_ITERS : *iters;
    return FB_OK;
}

/* After trial t: the benchmark's figures about it, into m->trial[t]. */
static fb_status trial_values(const struct fb_bench *b, void *state, struct measured *m, size_t t)
{
    struct fb_value v[FB_MAX_VALUES];
    size_t n = 0;
    fb_status st = b->trial_values(state, m->iters, v, &n);

    n = n < FB_MAX_VALUES ? n : FB_MAX_VALUES;
    for (size_t i = 0; st == FB_OK && i < n; i++) {
        m->trial[t * FB_MAX_VALUES + i] = v[i].value;
        m->values[i] = v[i];
    }
    m->nvalues = n;
    return st;
}

/* Warm-up, calibration, trials and verification of one case. Collective. */
static fb_status measure(struct fb_runner *r, const struct fb_bench *b, const struct fb_ctx *ctx,
                         const struct fb_case *c, struct measured *m)
{
    const struct fb_backend *be = r->s->be;
    const struct fb_options *o = r->opt;
    const struct fb_world *w = &r->s->world;
    bool active = is_active(c, w->rank), everyone = all_take_part(c, w->size);
    struct fb_stream *stream = NULL;
    struct fb_event *ev[2] = {NULL, NULL};
    void *state = NULL;
    fb_status st = FB_OK;

    fb_watchdog_phase("setup");
    if (active && ((st = be->stream_create(&stream)) != FB_OK ||
                   (st = be->event_create(&ev[0])) != FB_OK ||
                   (st = be->event_create(&ev[1])) != FB_OK))
        fb_error("%s %s: no stream or events: %s", b->name, c->name, fb_status_str(st));
    /* Agreed before setup: a setup may wait on a partner (p2p swaps IPC handles). */
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    if (active && (st = b->setup(ctx, c, stream, &state)) != FB_OK && st != FB_ERR_UNSUPPORTED)
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
        if (active && (st = b->values(state, m->values, &m->nvalues)) != FB_OK)
            fb_error("%s %s: %s", b->name, c->name, fb_status_str(st));
        st = fb_world_agree(w, st);
        goto out;
    }

    /* Warm-up: first touches, lazy connection setup and clock ramps stay out of the timing. */
    fb_watchdog_phase("warm-up");
    for (long i = 0; active && st == FB_OK && i < o->warmup; i++)
        st = b->iterate(state);
    if (active && st == FB_OK)
        st = be->stream_sync(stream);
    fb_world_barrier(w->comm, !active, everyone);
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    if (o->iters > 0)
        m->iters = o->iters;
    else if ((st = calibrate(r, b, c, state, stream, ev, active, &m->iters)) != FB_OK)
        goto out;

    for (long t = 0; t < o->trials; t++) {
        /* Start every trial together, so concurrent cases really overlap and a collective
         * is not charged for a late starter. Ranks that sit the case out wait quietly. */
        fb_watchdog_phase("trial %ld/%ld", t + 1, o->trials);
        /* interrupted (every rank learns it here together): the other trials are skipped */
        if (fb_world_barrier(w->comm, !active, everyone) == FB_ERR_INTERRUPTED && st == FB_OK)
            st = FB_ERR_INTERRUPTED;
        if (active && st == FB_OK)
            st = time_iters(b, be, state, stream, ev, m->iters, &m->samples[t]);
        if (active && st == FB_OK && b->trial_values)
            st = trial_values(b, state, m, (size_t)t);
    }
    fb_world_barrier(w->comm, !active, everyone);
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;

    /* A collective's spread from one iteration to the next (a slow member, a jittery link)
     * hides in a trial's average: time up to MAX_EACH iterations one by one, no more than the
     * trials themselves took. */
    m->neach = 0;
    if (c->report == FB_REPORT_COLLECTIVE) {
        m->neach = m->iters * o->trials < MAX_EACH ? m->iters * o->trials : MAX_EACH;
        fb_watchdog_phase("per-iteration timing");
        fb_world_barrier(w->comm, !active, everyone);
        if (active)
            st = time_each(b, be, state, stream, m->neach, m->each);
        fb_world_barrier(w->comm, !active, everyone);
        if ((st = fb_world_agree(w, st)) != FB_OK)
            goto out;
    }

    fb_watchdog_phase("verify");
    if (active && (st = b->verify(state, &m->wrong)) != FB_OK)
        fb_error("%s %s: verification could not run: %s", b->name, c->name, fb_status_str(st));
    st = fb_world_agree(w, st);
out:
    if (b->teardown)
        b->teardown(state);
    be->event_destroy(ev[0]);
    be->event_destroy(ev[1]);
    be->stream_destroy(stream);
    return st;
}

static void row_init(struct fb_row *row, const struct fb_runner *r, const struct fb_bench *b,
                     const struct fb_case *c, int ranks, int nodes, long iters)
{
    memset(row, 0, sizeof *row);
    snprintf(row->bench, sizeof row->bench, "%s", b->name);
    snprintf(row->kase, sizeof row->kase, "%s", c->name);
    snprintf(row->backend, sizeof row->backend, "%s", r->s->be->name);
    snprintf(row->transport, sizeof row->transport, "%s", c->transport);
    row->nodes = nodes;
    row->ranks = ranks;
    row->src = row->dst = -1;
    row->batch = c->batch > 0 ? c->batch : -1;
    /* work that is not a message (a compute step, a batch that fits) has no size */
    row->bytes = c->report == FB_REPORT_THROUGHPUT && c->bytes == 0 ? -1 : (long long)c->bytes;
    row->count = c->typed ? (long long)c->count : -1;
    if (c->typed)
        snprintf(row->dtype, sizeof row->dtype, "%s", dtype_names[c->dtype]);
    if (c->redop)
        snprintf(row->redop, sizeof row->redop, "%s", c->redop);
    row->iters = iters;
    row->detail = c->detail;
}

/* The row is about rank src (and its partner dst when dst >= 0). */
static void row_who(struct fb_row *row, const struct fb_runner *r, int src, int dst)
{
    row->src = src;
    row->dst = dst;
    if (src >= 0 && dst >= 0 && r->links)
        snprintf(row->link, sizeof row->link, "%s", r->links[(size_t)src * r->s->world.size + dst]);
}

static fb_status emit(struct fb_runner *r, struct fb_row *row, const char *metric, const char *unit,
                      const double *values, size_t n)
{
    snprintf(row->metric, sizeof row->metric, "%s", metric);
    snprintf(row->unit, sizeof row->unit, "%s", unit);
    if (fb_stats_compute(values, n, &row->st) != 0)
        return FB_ERR_NOMEM;
    return fb_results_add(r->res, row);
}

int fb_runner_slowest(const double *all, const int *flag, int nranks, size_t trials, double *out)
{
    int n = 0;

    for (size_t t = 0; t < trials; t++)
        out[t] = 0.0;
    for (int k = 0; k < nranks; k++) {
        if (!flag[k])
            continue;
        n++;
        for (size_t t = 0; t < trials; t++)
            if (all[(size_t)k * trials + t] > out[t])
                out[t] = all[(size_t)k * trials + t];
    }
    return n;
}

/* Rank 0: the point's own line in the stdout table. */
static void print_line(const struct fb_case *c, int nactive, long iters, const struct fb_stats *time,
                       const struct fb_stats *bw, const struct fb_stats *bus, long long wrong)
{
    char size[24], who[24];

    if (c->active == FB_ALL_RANKS)
        snprintf(who, sizeof who, "all");
    else if (!c->pair)
        snprintf(who, sizeof who, "%d", c->active);
    else
        snprintf(who, sizeof who, "%d%s%d", c->active, c->per_rank ? "<>" : ">", c->peer);
    switch (c->report) {
    case FB_REPORT_COLLECTIVE:
        /* nccl-tests' columns: size in bytes, count, type, redop, time, algbw, busbw, #wrong. */
        fb_out("%-16s %5d %12zu %10zu %8s %5s %7ld %10.2f %10.2f %10.2f %9.3f %9.3f %6lld%s\n",
               c->name, nactive, c->bytes, c->count, c->typed ? dtype_names[c->dtype] : "-",
               c->redop ? c->redop : "-", iters, time->median, time->p05, time->p95, bw->median,
               bus->median, wrong, wrong ? "  WRONG" : "");
        break;
    case FB_REPORT_LATENCY:
        fb_size_format(c->bytes, size, sizeof size);
        fb_out("%-16s %5d %6s %10s %7ld %10.2f %10.2f %10.2f %10.3f %6lld%s\n", c->name, nactive,
               who, size, iters, time->median, time->p05, time->p95, bw->median, wrong,
               wrong ? "  WRONG" : "");
        break;
    case FB_REPORT_THROUGHPUT:
        /* bw: the headline rate (images/s, else TFLOP/s, else GB/s); bus: GB/s copied */
        fb_out("%-16s %5d %6s %6ld %7ld %10.1f %10.1f %10.1f %10.2f %9.3f %6lld%s\n", c->name,
               nactive, who, c->batch, iters, time->median, time->p05, time->p95, bw->median,
               bus->median, wrong, wrong ? "  WRONG" : "");
        break;
    case FB_REPORT_BANDWIDTH:
        fb_size_format(c->bytes, size, sizeof size);
        fb_out("%-16s %5d %6s %10s %7ld %10.2f %10.2f %10.2f %9.3f %9.3f %6lld%s\n", c->name,
               nactive, who, size, iters, time->median, time->p05, time->p95, bw->median,
               bw->median / (c->per_rank ? nactive : 1), wrong, wrong ? "  WRONG" : "");
        break;
    }
}

/* Rank k's partner in a per-rank row. */
static int partner_of(const struct fb_case *c, int k)
{
    if (c->pair && c->stride > 0)
        return k - k % c->stride + (k % c->stride == c->active ? c->peer : c->active);
    if (c->pair)
        return k == c->active ? c->peer : c->active;
    if (c->shift > 0)
        return (k + c->shift) % c->group;
    return -1;
}

/* FB_REPORT_THROUGHPUT rows from per-trial times (microseconds per iteration): what `ranks`
 * ranks did together per second, each trial as long as `times` says. Writes the last rate row's
 * statistics (images/s, else TFLOP/s, else GB/s) into *headline. */
static fb_status emit_throughput(struct fb_runner *r, struct fb_row *row, const struct fb_case *c,
                                 const double *times, size_t n, int ranks, bool whole,
                                 struct fb_stats *headline, struct fb_stats *gbps)
{
    double *v = calloc(n, sizeof *v);
    fb_status st = FB_OK;

    if (!v)
        return FB_ERR_NOMEM;
    if (c->bytes > 0 && !c->bytes_label) {
        for (size_t t = 0; t < n; t++)
            v[t] = fb_gbps((double)c->bytes * ranks, times[t]);
        if ((st = emit(r, row, whole && c->per_rank ? "bandwidth_total" : "bandwidth", "GB/s", v,
                       n)) != FB_OK)
            goto out;
        *gbps = *headline = row->st;
    }
    if (c->flops > 0) {
        for (size_t t = 0; t < n; t++)
            v[t] = times[t] > 0 ? c->flops * ranks / times[t] / 1e6 : 0.0;
        if ((st = emit(r, row, "tflops", "TFLOP/s", v, n)) != FB_OK)
            goto out;
        *headline = row->st;
    }
    if (c->items > 0) {
        for (size_t t = 0; t < n; t++)
            v[t] = times[t] > 0 ? c->items * ranks / times[t] * 1e6 : 0.0;
        if ((st = emit(r, row, "images_per_s", "images/s", v, n)) != FB_OK)
            goto out;
        *headline = row->st;
    }
    if (c->busy_us > 0) {
        for (size_t t = 0; t < n; t++)
            v[t] = times[t] > c->busy_us ? 1.0 - c->busy_us / times[t] : 0.0;
        st = emit(r, row, "stall_fraction", "fraction", v, n);
    }
out:
    free(v);
    return st;
}

/* Rank 0, FB_REPORTS_VALUES: each figure once for the point, the smallest over the active
 * ranks (a batch that fits every GPU of the job), and once per rank when several took part.
 * vals[rank * FB_MAX_VALUES + i]; the metric names are rank 0's. */
static fb_status report_values(struct fb_runner *r, const struct fb_bench *b,
                               const struct fb_case *c, const struct measured *mine,
                               const double *vals)
{
    const struct fb_world *w = &r->s->world;
    int *flag = calloc((size_t)w->size, sizeof *flag), nactive = 0, nodes;
    struct fb_row row;
    fb_status st = FB_OK;

    if (!flag)
        return FB_ERR_NOMEM;
    for (int k = 0; k < w->size; k++)
        nactive += flag[k] = is_active(c, k);
    nodes = fb_world_count_nodes(r->node_of, flag, w->size);
    for (size_t i = 0; i < mine->nvalues && st == FB_OK; i++) {
        double least = 0.0;
        bool any = false;
        for (int k = 0; k < w->size; k++)
            if (flag[k] && (!any || vals[(size_t)k * FB_MAX_VALUES + i] < least)) {
                least = vals[(size_t)k * FB_MAX_VALUES + i];
                any = true;
            }
        row_init(&row, r, b, c, nactive, nodes, 0);
        row.wrong = -1;
        row_who(&row, r, nactive == 1 ? c->active : -1, -1);
        st = emit(r, &row, mine->values[i].metric, mine->values[i].unit, &least, 1);
        for (int k = 0; nactive > 1 && k < w->size && st == FB_OK; k++) {
            if (!flag[k])
                continue;
            row_init(&row, r, b, c, nactive, nodes, 0);
            row.wrong = -1;
            row.detail = true;
            row_who(&row, r, k, -1);
            st = emit(r, &row, mine->values[i].metric, mine->values[i].unit,
                      &vals[(size_t)k * FB_MAX_VALUES + i], 1);
        }
        fb_out("%-16s %5d %-24s %14.6g %s\n", c->name, nactive, mine->values[i].metric, least,
               mine->values[i].unit);
    }
    free(flag);
    return st;
}

/* Rank 0: rows of one case from every rank's samples (all[rank * trials + t]). */
static fb_status report(struct fb_runner *r, const struct fb_bench *b, const struct fb_case *c,
                        const double *all, const long long *wrong, long iters, long neach)
{
    const struct fb_world *w = &r->s->world;
    size_t trials = (size_t)r->opt->trials;
    int *flag = calloc((size_t)w->size, sizeof *flag);
    double *slow = calloc(trials, sizeof *slow), *bw = calloc(trials, sizeof *bw),
           *bus = calloc(trials, sizeof *bus);
    int nactive = 0, nodes;
    long long total_wrong = 0;
    struct fb_row row;
    struct fb_stats time_st, bw_st = {0}, bus_st = {0};
    fb_status st = FB_OK;

    if (!flag || !slow || !bw || !bus) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    /* A pair repeated on every node: each repetition's rows, as if measured alone. */
    for (int base = 0; c->pair && c->stride > 0 && base + c->stride <= c->group && st == FB_OK;
         base += c->stride) {
        struct fb_case one = *c;
        one.active += base;
        one.peer += base;
        one.stride = 0;
        st = report(r, b, &one, all, wrong, iters, neach);
    }
    if (c->pair && c->stride > 0)
        goto out;
    for (int k = 0; k < w->size; k++)
        if ((flag[k] = is_active(c, k)))
            total_wrong += wrong[k];
    nactive = fb_runner_slowest(all, flag, w->size, trials, slow);
    nodes = fb_world_count_nodes(r->node_of, flag, w->size);

    /* The point as a whole: each trial lasts as long as its slowest rank. */
    row_init(&row, r, b, c, nactive, nodes, iters);
    row_who(&row, r, c->active, c->pair ? c->peer : -1);
    row.wrong = total_wrong;
    for (size_t t = 0; t < trials; t++) {
        double moved = c->per_rank ? (double)c->bytes * nactive : (double)c->bytes;
        bw[t] = c->report == FB_REPORT_LATENCY ? slow[t] / (c->legs > 0 ? c->legs : 1)
                                               : fb_gbps(moved, slow[t]);
        bus[t] = bw[t] * c->bus_factor;
    }
    memset(&bus_st, 0, sizeof bus_st);
    if ((st = emit(r, &row, "time", "us", slow, trials)) != FB_OK)
        goto out;
    time_st = row.st;
    switch (c->report) {
    case FB_REPORT_COLLECTIVE:
        if ((st = emit(r, &row, "algbw", "GB/s", bw, trials)) != FB_OK)
            goto out;
        bw_st = row.st;
        if ((st = emit(r, &row, "busbw", "GB/s", bus, trials)) != FB_OK)
            goto out;
        bus_st = row.st;
        if (neach > 0) {
            /* each iteration as long as its slowest rank, like the trials */
            double each[MAX_EACH];
            fb_runner_slowest(r->each_all, flag, w->size, (size_t)neach, each);
            if ((st = emit(r, &row, "time_iter", "us", each, (size_t)neach)) != FB_OK)
                goto out;
        }
        break;
    case FB_REPORT_LATENCY:
        if ((st = emit(r, &row, "latency", "us", bw, trials)) != FB_OK)
            goto out;
        bw_st = row.st;
        break;
    case FB_REPORT_BANDWIDTH:
        if ((st = emit(r, &row, c->per_rank ? "bandwidth_total" : "bandwidth", "GB/s", bw,
                       trials)) != FB_OK)
            goto out;
        bw_st = row.st;
        break;
    case FB_REPORT_THROUGHPUT:
        if ((st = emit_throughput(r, &row, c, slow, trials, c->per_rank ? nactive : 1, true,
                                  &bw_st, &bus_st)) != FB_OK)
            goto out;
        break;
    }

    /* Concurrent copies: each rank's own figures, so one slow GPU, socket or pair stands out. */
    for (int k = 0; c->per_rank && k < w->size; k++) {
        const double *mine = &all[(size_t)k * trials];
        if (!flag[k])
            continue;
        row_init(&row, r, b, c, nactive, nodes, iters);
        row.detail = true;
        row_who(&row, r, k, partner_of(c, k));
        row.wrong = wrong[k];
        for (size_t t = 0; t < trials; t++)
            bw[t] = fb_gbps((double)c->bytes, mine[t]);
        if ((st = emit(r, &row, "time", "us", mine, trials)) != FB_OK)
            goto out;
        if (c->report == FB_REPORT_THROUGHPUT) {
            struct fb_stats unused[2];
            st = emit_throughput(r, &row, c, mine, trials, 1, false, &unused[0], &unused[1]);
        } else {
            st = emit(r, &row, "bandwidth", "GB/s", bw, trials);
        }
        if (st != FB_OK)
            goto out;
    }
    print_line(c, nactive, iters, &time_st, &bw_st, &bus_st, total_wrong);
out:
    free(flag);
    free(slow);
    free(bw);
    free(bus);
    return st;
}

/* Rank 0, trial_values: one row per figure, each trial's value taken from the rank whose time
 * set that trial (the slowest of the active ranks), so a split of the step adds up to the
 * `time` of the same trial. tv[(rank * trials + t) * FB_MAX_VALUES + i]. */
static fb_status report_trial_values(struct fb_runner *r, const struct fb_bench *b,
                                     const struct fb_case *c, const struct measured *mine,
                                     const double *all, const double *tv, long long wrong,
                                     long iters)
{
    const struct fb_world *w = &r->s->world;
    size_t trials = (size_t)r->opt->trials;
    int *flag = calloc((size_t)w->size, sizeof *flag), *who = calloc(trials, sizeof *who);
    double *v = calloc(trials, sizeof *v);
    int nactive = 0, nodes;
    struct fb_row row;
    fb_status st = FB_OK;

    if (!flag || !who || !v) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    for (int k = 0; k < w->size; k++)
        nactive += flag[k] = is_active(c, k);
    nodes = fb_world_count_nodes(r->node_of, flag, w->size);
    for (size_t t = 0; t < trials; t++) {
        who[t] = -1;
        for (int k = 0; k < w->size; k++)
            if (flag[k] && (who[t] < 0 || all[(size_t)k * trials + t] >
                                              all[(size_t)who[t] * trials + t]))
                who[t] = k;
    }
    for (size_t i = 0; i < mine->nvalues && st == FB_OK; i++) {
        for (size_t t = 0; t < trials; t++)
            v[t] = who[t] < 0 ? 0.0 : tv[((size_t)who[t] * trials + t) * FB_MAX_VALUES + i];
        row_init(&row, r, b, c, nactive, nodes, iters);
        row_who(&row, r, c->active, c->pair ? c->peer : -1);
        row.wrong = wrong;
        st = emit(r, &row, mine->values[i].metric, mine->values[i].unit, v, trials);
    }
out:
    free(flag);
    free(who);
    free(v);
    return st;
}

static void print_header(const struct fb_bench *b, const struct fb_options *o, int group,
                         int nodes, bool first)
{
    if (first) {
        fb_out("\n# %s: %s\n", b->name, b->summary);
        if (!(b->needs & FB_REPORTS_VALUES))
            fb_out("# sizes in bytes (K/M/G = 2^10/2^20/2^30); GB/s = 1e9 B/s; time per iteration, "
               "median [p05 p95] of %ld trials\n", o->trials);
    }
    if (group > 0)
        fb_out("# on ranks 0..%d (%d rank%s on %d node%s)\n", group - 1, group,
               group == 1 ? "" : "s", nodes, nodes == 1 ? "" : "s");
}

static void print_columns(enum fb_report kind, const char *transport)
{
    fb_out("# over %s\n", transport);
    switch (kind) {
    case FB_REPORT_COLLECTIVE:
        fb_out("# %-14s %5s %12s %10s %8s %5s %7s %10s %10s %10s %9s %9s %6s\n", "case", "ranks",
               "size", "count", "type", "redop", "iters", "time_us", "p05", "p95", "algbw",
               "busbw", "#wrong");
        break;
    case FB_REPORT_LATENCY:
        fb_out("# %-14s %5s %6s %10s %7s %10s %10s %10s %10s %6s\n", "case", "ranks", "rank",
               "size", "iters", "time_us", "p05", "p95", "latency_us", "wrong");
        break;
    case FB_REPORT_BANDWIDTH:
        fb_out("# %-14s %5s %6s %10s %7s %10s %10s %10s %9s %9s %6s\n", "case", "ranks", "rank",
               "size", "iters", "time_us", "p05", "p95", "GB/s", "per_rank", "wrong");
        break;
    case FB_REPORT_THROUGHPUT:
        fb_out("# %-14s %5s %6s %6s %7s %10s %10s %10s %10s %9s %6s\n", "case", "ranks", "rank",
               "batch", "iters", "time_us", "p05", "p95", "rate", "GB/s", "wrong");
        fb_out("# rate: images/s when the case counts images, else TFLOP/s, else GB/s\n");
        break;
    }
}

int fb_runner_groups(const struct fb_options *o, int size, int *out, size_t cap)
{
    size_t n = 0;

    if (o->ngroups) {
        for (size_t i = 0; i < o->ngroups && n < cap; i++)
            out[n++] = o->groups[i];
        return (int)n;
    }
    for (int k = 1; k < size && n + 1 < cap; k *= 2)
        out[n++] = k;
    out[n++] = size;
    return (int)n;
}

/* Collective: the communicators of the group of the first k ranks. The whole world reuses the
 * runner's own. */
static fb_status group_open(struct fb_runner *r, const struct fb_bench *b, int k,
                            struct fb_ctx *ctx)
{
    const struct fb_world *w = &r->s->world;
    fb_status st = FB_OK;

    ctx->ranks = k;
    ctx->comm = w->comm;
    ctx->coll_comm = r->coll_comm;
    ctx->world_coll = r->coll_comm;
    if (k == w->size)
        return FB_OK;
    ctx->coll_comm = NULL;
    if (MPI_Comm_split(w->comm, w->rank < k ? 0 : MPI_UNDEFINED, w->rank, &ctx->comm) !=
        MPI_SUCCESS) {
        ctx->comm = MPI_COMM_NULL;
        st = FB_ERR_MPI;
    }
    /* Agreed before the split of the collectives, which every rank must enter. */
    if ((st = fb_world_agree(w, st)) != FB_OK)
        return st;
    if (b->needs & FB_NEEDS_COLL)
        st = r->s->coll->comm_split(r->coll_comm, ctx->comm, &ctx->coll_comm);
    return fb_world_agree(w, st);
}

static void group_close(struct fb_runner *r, struct fb_ctx *ctx)
{
    if (ctx->coll_comm && ctx->coll_comm != r->coll_comm)
        r->s->coll->comm_destroy(ctx->coll_comm);
    if (ctx->comm != MPI_COMM_NULL && ctx->comm != r->s->world.comm)
        MPI_Comm_free(&ctx->comm);
    ctx->coll_comm = NULL;
    ctx->comm = MPI_COMM_NULL;
}

/* Rank 0, after a point: results.csv is rewritten unless the last rewrite took more than a
 * tenth of the time since it ended. A small file is rewritten after every point; one of many
 * rows (a large p2p matrix) less often, so rewriting never costs more than about 10% of the
 * run. fb_runner_run rewrites it at the end of every benchmark in any case. */
static fb_status flush_point(struct fb_runner *r)
{
    double start = fb_clock_now_us();
    fb_status st;

    r->flush_pending = true;
    if (start - r->last_flush_end_us < 10.0 * r->last_flush_cost_us)
        return FB_OK;
    st = fb_results_flush(r->res);
    r->last_flush_end_us = fb_clock_now_us();
    r->last_flush_cost_us = r->last_flush_end_us - start;
    r->flush_pending = st != FB_OK;
    return st;
}

/* Collective: plans and measures every case of one group, gathering to rank 0. */
static fb_status run_group(struct fb_runner *r, const struct fb_bench *b, struct fb_ctx *ctx,
                           struct measured *m, double *all, long long *wrong, bool *first)
{
    const struct fb_world *w = &r->s->world;
    struct fb_case *cases = NULL;
    size_t ncases = 0;
    long long mine_wrong;
    int nodes = 0, *flag = NULL;
    fb_status st;

    if ((st = fb_world_agree(w, b->plan(ctx, &cases, &ncases))) != FB_OK)
        goto out;
    if (w->rank == 0 && (flag = calloc((size_t)w->size, sizeof *flag))) {
        for (int k = 0; k < ctx->ranks; k++)
            flag[k] = 1;
        nodes = fb_world_count_nodes(r->node_of, flag, w->size);
        print_header(b, r->opt, (b->needs & FB_SCALES) ? ctx->ranks : 0, nodes, *first);
    }
    *first = false;
    for (size_t i = 0; i < ncases; i++) {
        struct fb_case *c = &cases[i];
        c->group = ctx->ranks;
        if (w->rank == 0 && (i == 0 || c->report != cases[i - 1].report ||
                             strcmp(c->transport, cases[i - 1].transport) != 0)) {
            if (b->needs & FB_REPORTS_VALUES)
                fb_out("# %-14s %5s %-24s %14s unit (the smallest over the ranks)\n", "case",
                       "ranks", "metric", "value");
            else
                print_columns(c->report, c->transport);
        }
        memset(m->samples, 0, (size_t)r->opt->trials * sizeof *m->samples);
        if (m->trial)
            memset(m->trial, 0, (size_t)r->opt->trials * FB_MAX_VALUES * sizeof *m->trial);
        m->wrong = 0;
        if (r->point_begin)
            r->point_begin(r->progress, b->name, c, ctx->ranks);
        fb_watchdog_point(b->name, "%s %zu bytes on %d rank(s)", c->name, c->bytes, ctx->ranks);
        if ((st = measure(r, b, ctx, c, m)) == FB_ERR_UNSUPPORTED) {
            st = FB_OK; /* waived with a reason; the others go on */
            continue;
        }
        if (st != FB_OK)
            break;
        r->points++;
        if (b->needs & FB_REPORTS_VALUES) {
            double mine[FB_MAX_VALUES] = {0};
            for (size_t v = 0; v < m->nvalues && v < FB_MAX_VALUES; v++)
                mine[v] = m->values[v].value;
            fb_watchdog_phase("gather");
            fb_watchdog_wait_begin();
            MPI_Gather(mine, FB_MAX_VALUES, MPI_DOUBLE, r->values_all, FB_MAX_VALUES,
                       MPI_DOUBLE, 0, w->comm);
            fb_watchdog_wait_end();
            if (w->rank == 0) {
                fb_run_record_lock(); /* a stopped run's rows are written by the stop hook */
                if ((st = report_values(r, b, c, m, r->values_all)) == FB_OK)
                    st = flush_point(r);
                fb_run_record_unlock();
            }
            if ((st = fb_world_agree(w, st)) != FB_OK)
                break;
            continue;
        }
        mine_wrong = (long long)m->wrong;
        /* One gather per point, not one message per rank. */
        fb_watchdog_phase("gather");
        fb_watchdog_wait_begin();
        MPI_Gather(m->samples, (int)r->opt->trials, MPI_DOUBLE, all, (int)r->opt->trials,
                   MPI_DOUBLE, 0, w->comm);
        MPI_Gather(&mine_wrong, 1, MPI_LONG_LONG, wrong, 1, MPI_LONG_LONG, 0, w->comm);
        if (m->neach)
            MPI_Gather(m->each, (int)m->neach, MPI_DOUBLE, r->each_all, (int)m->neach, MPI_DOUBLE,
                       0, w->comm);
        if (b->trial_values)
            MPI_Gather(m->trial, (int)r->opt->trials * FB_MAX_VALUES, MPI_DOUBLE, r->trial_all,
                       (int)r->opt->trials * FB_MAX_VALUES, MPI_DOUBLE, 0, w->comm);
        fb_watchdog_wait_end();
        if (w->rank == 0) {
            long long total_wrong = 0;
            for (int k = 0; k < w->size; k++)
                total_wrong += is_active(c, k) ? wrong[k] : 0;
            fb_run_record_lock();
            st = report(r, b, c, all, wrong, m->iters, m->neach);
            if (st == FB_OK && b->trial_values)
                st = report_trial_values(r, b, c, m, all, r->trial_all, total_wrong, m->iters);
            if (st == FB_OK)
                st = flush_point(r);
            fb_run_record_unlock();
            for (int k = 0; k < w->size; k++)
                if (is_active(c, k) && wrong[k] > 0) {
                    r->failed_points++;
                    fb_error("%s %s %zu bytes: %lld wrong elements on rank %d", b->name, c->name,
                             c->bytes, wrong[k], k);
                }
        }
        if ((st = fb_world_agree(w, st)) != FB_OK)
            break;
    }
    fb_progress_end(r->progress);
out:
    free(flag);
    free(cases);
    return st;
}

fb_status fb_runner_run(struct fb_runner *r, const struct fb_bench *b)
{
    const struct fb_world *w = &r->s->world;
    struct fb_ctx ctx = {.s = r->s, .be = r->s->be, .opt = r->opt, .node_of = r->node_of};
    struct measured m = {0};
    double *all = NULL;
    long long *wrong = NULL;
    int groups[FB_MAX_SIZES + 1], ngroups = 1;
    size_t first_row = r->res ? r->res->nrows : 0;
    bool first = true;
    fb_status st;

    if (w->size < b->min_ranks) {
        if (w->rank == 0)
            fb_warn("%s waived: needs at least %d ranks, this run has %d", b->name, b->min_ranks,
                    w->size);
        return FB_ERR_UNSUPPORTED;
    }
    if ((b->needs & FB_NEEDS_COLL) && !r->coll_comm) {
        fb_watchdog_phase("%s communicator creation", r->s->coll->name);
        st = r->s->coll->comm_create(w->comm, r->s->be, &r->coll_comm);
        if ((st = fb_world_agree(w, st)) != FB_OK)
            return st;
    }
    if ((b->needs & FB_NEEDS_LINKS) && !r->links_done) {
        r->links_done = true;
        fb_watchdog_phase("links");
        st = fb_links_compute(r->s, w->rank == 0 ? &r->links : NULL,
                              w->rank == 0 ? &r->rank_names : NULL);
        if ((st = fb_world_agree(w, st)) != FB_OK)
            return st;
    }
    groups[0] = w->size;
    if (b->needs & FB_SCALES)
        ngroups = fb_runner_groups(r->opt, w->size, groups, FB_MAX_SIZES + 1);

    m.samples = calloc((size_t)r->opt->trials, sizeof *m.samples);
    if (b->trial_values)
        m.trial = calloc((size_t)r->opt->trials * FB_MAX_VALUES, sizeof *m.trial);
    if (w->rank == 0) {
        if (b->trial_values && !r->trial_all)
            r->trial_all = calloc((size_t)w->size * (size_t)r->opt->trials * FB_MAX_VALUES,
                                  sizeof *r->trial_all);
        all = calloc((size_t)w->size * (size_t)r->opt->trials, sizeof *all);
        wrong = calloc((size_t)w->size, sizeof *wrong);
        if (!r->each_all)
            r->each_all = calloc((size_t)w->size * MAX_EACH, sizeof *r->each_all);
        if (!r->values_all)
            r->values_all = calloc((size_t)w->size * FB_MAX_VALUES, sizeof *r->values_all);
    }
    st = (!m.samples || (b->trial_values && !m.trial) ||
          (w->rank == 0 && (!all || !wrong || !r->each_all || !r->values_all ||
                            (b->trial_values && !r->trial_all))))
             ? FB_ERR_NOMEM
             : FB_OK;
    for (int g = 0; g < ngroups && (st = fb_world_agree(w, st)) == FB_OK; g++) {
        fb_watchdog_phase("group of %d rank(s)", groups[g]);
        if ((st = group_open(r, b, groups[g], &ctx)) == FB_OK)
            st = run_group(r, b, &ctx, &m, all, wrong, &first);
        group_close(r, &ctx);
    }
    fb_watchdog_phase("summary");
    if (w->rank == 0)
        fb_run_record_lock();
    if (st == FB_OK && w->rank == 0 && b->summarize) {
        ctx.ranks = w->size;
        ctx.links = (const char(*)[FB_LINK_LABEL])r->links;
        ctx.rank_names = (const char(*)[FB_RANK_NAME])r->rank_names;
        b->summarize(&ctx, r->res, first_row);
        r->flush_pending = true;
    }
    /* Whatever happened, every point measured so far is on disk when a benchmark ends. */
    if (w->rank == 0 && r->flush_pending) {
        fb_status flushed = fb_results_flush(r->res);
        r->flush_pending = flushed != FB_OK;
        st = st != FB_OK ? st : flushed;
    }
    if (w->rank == 0)
        fb_run_record_unlock();
    st = fb_world_agree(w, st);
    MPI_Bcast(&r->failed_points, 1, MPI_INT, 0, w->comm);
    free(m.samples);
    free(m.trial);
    free(all);
    free(wrong);
    return st;
}
