/* The runner. Every rank walks the same plan; the ranks that a case leaves idle still take part
 * in its barriers so that all ranks stay in step. */
#include "runner.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "units.h"

enum { MAX_ITERS = 100000 };

static const char *const dtype_names[] = {
    [FB_DTYPE_FLOAT32] = "float32", [FB_DTYPE_FLOAT64] = "float64", [FB_DTYPE_INT32] = "int32"};

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
    memset(r, 0, sizeof *r);
}

/* One case's measurements on this rank. */
struct measured {
    double *samples; /* per trial: microseconds per iteration */
    long iters;
    size_t wrong;
};

static bool is_active(const struct fb_case *c, int rank)
{
    return c->active == FB_ALL_RANKS || c->active == rank;
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

/* Warm-up, calibration, trials and verification of one case. Collective. */
static fb_status measure(struct fb_runner *r, const struct fb_bench *b, const struct fb_ctx *ctx,
                         const struct fb_case *c, struct measured *m)
{
    const struct fb_backend *be = r->s->be;
    const struct fb_options *o = r->opt;
    const struct fb_world *w = &r->s->world;
    bool active = is_active(c, w->rank);
    struct fb_stream *stream = NULL;
    struct fb_event *ev[2] = {NULL, NULL};
    void *state = NULL;
    double one = 0.0, slowest = 0.0;
    fb_status st = FB_OK;

    if (active && ((st = be->stream_create(&stream)) != FB_OK ||
                   (st = be->event_create(&ev[0])) != FB_OK ||
                   (st = be->event_create(&ev[1])) != FB_OK ||
                   (st = b->setup(ctx, c, stream, &state)) != FB_OK))
        fb_error("%s %s: setup of %zu bytes failed: %s", b->name, c->name, c->bytes,
                 fb_status_str(st));
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;

    /* Warm-up: first touches, lazy connection setup and clock ramps stay out of the timing. */
    for (long i = 0; active && st == FB_OK && i < o->warmup; i++)
        st = b->iterate(state);
    if (active && st == FB_OK)
        st = be->stream_sync(stream);
    /* Calibration: one timed iteration tells how many fill a trial; the slowest rank decides
     * so every rank runs the same count. */
    if (active && st == FB_OK && o->iters == 0)
        st = time_iters(b, be, state, stream, ev, 1, &one);
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    if (o->iters > 0) {
        m->iters = o->iters;
    } else {
        MPI_Allreduce(&one, &slowest, 1, MPI_DOUBLE, MPI_MAX, w->comm);
        m->iters = slowest > 0.0 ? (long)ceil(o->trial_ms * 1e3 / slowest) : MAX_ITERS;
        m->iters = m->iters < 1 ? 1 : m->iters > MAX_ITERS ? MAX_ITERS : m->iters;
    }

    for (long t = 0; t < o->trials; t++) {
        /* Start every trial together, so concurrent cases really overlap and a collective
         * is not charged for a late starter. */
        MPI_Barrier(w->comm);
        if (active && st == FB_OK)
            st = time_iters(b, be, state, stream, ev, m->iters, &m->samples[t]);
    }
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;

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
    row->batch = -1;
    row->bytes = (long long)c->bytes;
    row->count = c->typed ? (long long)c->count : -1;
    if (c->typed)
        snprintf(row->dtype, sizeof row->dtype, "%s", dtype_names[c->dtype]);
    if (c->redop)
        snprintf(row->redop, sizeof row->redop, "%s", c->redop);
    row->iters = iters;
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

/* Rank 0: rows of one case from every rank's samples (all[rank * trials + t]). */
static fb_status report(struct fb_runner *r, const struct fb_bench *b, const struct fb_case *c,
                        const double *all, const long long *wrong, long iters)
{
    const struct fb_world *w = &r->s->world;
    size_t trials = (size_t)r->opt->trials;
    int *flag = calloc((size_t)w->size, sizeof *flag);
    double *slow = calloc(trials, sizeof *slow), *bw = calloc(trials, sizeof *bw),
           *bus = calloc(trials, sizeof *bus);
    int nactive = 0, nodes;
    long long total_wrong = 0;
    struct fb_row row;
    struct fb_stats time_st, bw_st, bus_st;
    char size[24], who[16];
    fb_status st = FB_OK;

    if (!flag || !slow || !bw || !bus) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    for (int k = 0; k < w->size; k++)
        if ((flag[k] = is_active(c, k)))
            total_wrong += wrong[k];
    nactive = fb_runner_slowest(all, flag, w->size, trials, slow);
    nodes = fb_world_count_nodes(r->node_of, flag, w->size);

    /* The point as a whole: each trial lasts as long as its slowest rank. */
    row_init(&row, r, b, c, nactive, nodes, iters);
    row.src = c->active;
    row.wrong = total_wrong;
    for (size_t t = 0; t < trials; t++) {
        double moved = c->per_rank ? (double)c->bytes * nactive : (double)c->bytes;
        bw[t] = fb_gbps(moved, slow[t]);
        bus[t] = bw[t] * c->bus_factor;
    }
    if ((st = emit(r, &row, "time", "us", slow, trials)) != FB_OK)
        goto out;
    time_st = row.st;
    if (c->collective) {
        if ((st = emit(r, &row, "algbw", "GB/s", bw, trials)) != FB_OK)
            goto out;
        bw_st = row.st;
        if ((st = emit(r, &row, "busbw", "GB/s", bus, trials)) != FB_OK)
            goto out;
        bus_st = row.st;
    } else {
        if ((st = emit(r, &row, c->per_rank ? "bandwidth_total" : "bandwidth", "GB/s", bw,
                       trials)) != FB_OK)
            goto out;
        bw_st = row.st;
        memset(&bus_st, 0, sizeof bus_st);
    }

    /* Concurrent copies: each rank's own figures, so one slow GPU or socket stands out. */
    for (int k = 0; c->per_rank && k < w->size; k++) {
        const double *mine = &all[(size_t)k * trials];
        if (!flag[k])
            continue;
        row_init(&row, r, b, c, nactive, nodes, iters);
        row.src = k;
        row.wrong = wrong[k];
        for (size_t t = 0; t < trials; t++)
            bw[t] = fb_gbps((double)c->bytes, mine[t]);
        if ((st = emit(r, &row, "time", "us", mine, trials)) != FB_OK ||
            (st = emit(r, &row, "bandwidth", "GB/s", bw, trials)) != FB_OK)
            goto out;
    }

    fb_size_format(c->bytes, size, sizeof size);
    if (c->active == FB_ALL_RANKS)
        snprintf(who, sizeof who, "all");
    else
        snprintf(who, sizeof who, "%d", c->active);
    fb_out("%-16s %5d %4s %10s %7ld %10.2f %10.2f %10.2f %9.3f %9.3f %6lld%s\n", c->name, nactive,
           who, size, iters, time_st.median, time_st.p05, time_st.p95, bw_st.median,
           c->collective ? bus_st.median : bw_st.median / (c->per_rank ? nactive : 1),
           total_wrong, total_wrong ? "  WRONG" : "");
out:
    free(flag);
    free(slow);
    free(bw);
    free(bus);
    return st;
}

static void print_header(const struct fb_bench *b, const struct fb_options *o, bool bus)
{
    fb_out("\n# %s: %s\n", b->name, b->summary);
    fb_out("# sizes in bytes (K/M/G = 2^10/2^20/2^30); GB/s = 1e9 B/s; time per iteration, "
           "median [p05 p95] of %ld trials\n", o->trials);
    fb_out("# %-14s %5s %4s %10s %7s %10s %10s %10s %9s %9s %6s\n", "case", "ranks", "rank",
           "size", "iters", "time_us", "p05", "p95", bus ? "algbw" : "GB/s",
           bus ? "busbw" : "per_rank", "wrong");
}

fb_status fb_runner_run(struct fb_runner *r, const struct fb_bench *b)
{
    const struct fb_world *w = &r->s->world;
    struct fb_ctx ctx = {.s = r->s, .be = r->s->be, .opt = r->opt};
    struct fb_case *cases = NULL;
    size_t ncases = 0;
    struct measured m = {0};
    double *all = NULL;
    long long mine_wrong, *wrong = NULL;
    fb_status st;

    if (w->size < b->min_ranks) {
        if (w->rank == 0)
            fb_warn("%s waived: needs at least %d ranks, this run has %d", b->name, b->min_ranks,
                    w->size);
        return FB_ERR_UNSUPPORTED;
    }
    if ((b->needs & FB_NEEDS_COLL) && !r->coll_comm) {
        st = r->s->coll->comm_create(w->comm, r->s->be, &r->coll_comm);
        if ((st = fb_world_agree(w, st)) != FB_OK)
            return st;
    }
    ctx.coll_comm = r->coll_comm;
    if ((st = b->plan(&ctx, &cases, &ncases)) != FB_OK)
        return fb_world_agree(w, st);

    m.samples = calloc((size_t)r->opt->trials, sizeof *m.samples);
    if (w->rank == 0) {
        all = calloc((size_t)w->size * (size_t)r->opt->trials, sizeof *all);
        wrong = calloc((size_t)w->size, sizeof *wrong);
    }
    st = (!m.samples || (w->rank == 0 && (!all || !wrong))) ? FB_ERR_NOMEM : FB_OK;
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;

    if (w->rank == 0)
        print_header(b, r->opt, ncases && cases[0].collective);
    for (size_t i = 0; i < ncases; i++) {
        const struct fb_case *c = &cases[i];
        memset(m.samples, 0, (size_t)r->opt->trials * sizeof *m.samples);
        m.wrong = 0;
        if ((st = measure(r, b, &ctx, c, &m)) != FB_OK)
            break;
        mine_wrong = (long long)m.wrong;
        /* One gather per point, not one message per rank. */
        MPI_Gather(m.samples, (int)r->opt->trials, MPI_DOUBLE, all, (int)r->opt->trials,
                   MPI_DOUBLE, 0, w->comm);
        MPI_Gather(&mine_wrong, 1, MPI_LONG_LONG, wrong, 1, MPI_LONG_LONG, 0, w->comm);
        r->points++;
        if (w->rank == 0) {
            st = report(r, b, c, all, wrong, m.iters);
            if (st == FB_OK)
                st = fb_results_flush(r->res);
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
out:
    MPI_Bcast(&r->failed_points, 1, MPI_INT, 0, w->comm);
    free(cases);
    free(m.samples);
    free(all);
    free(wrong);
    return st;
}
