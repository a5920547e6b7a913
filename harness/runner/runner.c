/* The runner. Every rank walks the same plan; the ranks that a case leaves idle still take part
 * in its barriers so that all ranks stay in step. This file: the run of one benchmark, its
 * groups of ranks and their communicators, the gather of each point and the results.csv
 * rewrites; timing a case is in runner_measure.c, its rows and lines in runner_report.c. */
#define _POSIX_C_SOURCE 200809L
#include "runner.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "run_record.h"
#include "runner_impl.h"
#include "watchdog.h"

fb_status fb_runner_init(struct fb_runner *r, struct fb_session *s, const struct fb_options *opt,
                         struct fb_results *res)
{
    char why[160];

    memset(r, 0, sizeof *r);
    r->s = s;
    r->opt = opt;
    r->res = res;
    fb_status st = fb_runner_test_slow(getenv("FB_TEST_SLOW_RANK"), &r->slow_rank, &r->slow_us,
                                       why, sizeof why), all;

    /* agreed, so no rank goes on to the Allgather alone (a rank without the variable, say);
     * each rank that refuses it says so */
    if (st != FB_OK)
        fb_error("%s", why);
    if (st == FB_OK && !(r->node_of = malloc((size_t)s->world.size * sizeof *r->node_of)))
        st = FB_ERR_NOMEM;
    if ((all = fb_world_agree(&s->world, st)) != FB_OK)
        return all;
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
    free(r->synced_all);
    memset(r, 0, sizeof *r);
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

/* Rank 0, after a point's rows are added (from row0 on): the largest share of the point's time
 * that one of its ranks spent waiting for a CPU, on each of them (results.csv's cpu_wait); left
 * unknown where a rank's kernel does not say. The benchmark's count of busy points grows. */
static void mark_cpu_wait(struct fb_runner *r, const struct fb_case *c, const double *waits,
                          size_t row0)
{
    double most = 0.0;

    if (!r->res)
        return;
    for (int k = 0; k < r->s->world.size; k++) {
        if (!fb_runner_is_active(c, k))
            continue;
        if (!(waits[k] >= 0))
            return;
        most = waits[k] > most ? waits[k] : most;
    }
    for (size_t i = row0; i < r->res->nrows; i++) {
        r->res->rows[i].cpu_wait = most;
        r->res->rows[i].cpu_wait_known = true;
    }
    r->wait_points++;
    if (most > FB_CPU_WAIT_BUSY)
        r->busy_points++;
    r->busiest = most > r->busiest ? most : r->busiest;
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
    double *waits = NULL;
    fb_status st;

    st = b->plan(ctx, &cases, &ncases);
    if (st == FB_OK && w->rank == 0 && !(waits = malloc((size_t)w->size * sizeof *waits)))
        st = FB_ERR_NOMEM;
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    if (w->rank == 0 && (flag = calloc((size_t)w->size, sizeof *flag))) {
        for (int k = 0; k < ctx->ranks; k++)
            flag[k] = 1;
        nodes = fb_world_count_nodes(r->node_of, flag, w->size);
        fb_runner_print_header(b, r->opt, (b->needs & FB_SCALES) ? ctx->ranks : 0, nodes, *first);
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
                fb_runner_print_columns(c->report, c->transport);
            if (fb_runner_synced(r->opt, c))
                fb_out("# --timing %s: a `synced:` line per point, timed as OSU does (a barrier "
                       "before each iteration, outside the time): time_us is the mean over ranks "
                       "of each rank's mean iteration, min and max over ranks beside it\n",
                       r->opt->timing);
        }
        memset(m->samples, 0, (size_t)r->opt->trials * sizeof *m->samples);
        memset(m->synced, 0, (size_t)r->opt->trials * sizeof *m->synced);
        if (m->trial)
            memset(m->trial, 0, (size_t)r->opt->trials * FB_MAX_VALUES * sizeof *m->trial);
        m->wrong = 0;
        if (r->point_begin)
            r->point_begin(r->progress, b->name, c, ctx->ranks);
        fb_watchdog_point(b->name, "%s %zu bytes on %d rank(s)", c->name, c->bytes, ctx->ranks);
        /* the clock outside the two reads, so every wait counted lies within [t0, t1] (a
         * preemption between a read and the clock made a share of 1.36 in CI's host_suite_np1,
         * 2026-12-06); the scheduler's
         * clock is not CLOCK_MONOTONIC, so the share is held to 1 */
        double t0 = fb_clock_now_s(), wait0 = fb_clock_cpu_wait_ns();
        st = fb_runner_measure(r, b, ctx, c, m);
        double wait1 = fb_clock_cpu_wait_ns(), t1 = fb_clock_now_s();
        m->cpu_wait = wait0 >= 0 && wait1 >= wait0 && t1 > t0 ? (wait1 - wait0) / 1e9 / (t1 - t0)
                                                                : -1.0;
        if (m->cpu_wait > 1.0)
            m->cpu_wait = 1.0;
        if (st == FB_ERR_UNSUPPORTED) {
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
                /* found, not timed: a busy CPU does not change them (no cpu_wait) */
                fb_run_record_lock(); /* a stopped run's rows are written by the stop hook */
                if ((st = fb_runner_report_values(r, b, c, m, r->values_all)) == FB_OK)
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
        MPI_Gather(&m->cpu_wait, 1, MPI_DOUBLE, waits, 1, MPI_DOUBLE, 0, w->comm);
        if (m->neach)
            MPI_Gather(m->each, (int)m->neach, MPI_DOUBLE, r->each_all, (int)m->neach, MPI_DOUBLE,
                       0, w->comm);
        if (b->trial_values)
            MPI_Gather(m->trial, (int)r->opt->trials * FB_MAX_VALUES, MPI_DOUBLE, r->trial_all,
                       (int)r->opt->trials * FB_MAX_VALUES, MPI_DOUBLE, 0, w->comm);
        if (fb_runner_synced(r->opt, c))
            MPI_Gather(m->synced, (int)r->opt->trials, MPI_DOUBLE, r->synced_all,
                       (int)r->opt->trials, MPI_DOUBLE, 0, w->comm);
        fb_watchdog_wait_end();
        if (w->rank == 0) {
            long long total_wrong = 0;
            for (int k = 0; k < w->size; k++)
                total_wrong += fb_runner_is_active(c, k) ? wrong[k] : 0;
            bool batched = fb_runner_batched(r->opt, c);
            size_t row0 = r->res ? r->res->nrows : 0;
            fb_run_record_lock();
            if (batched)
                st = fb_runner_report(r, b, c, all, wrong, m->iters, m->neach);
            if (st == FB_OK && fb_runner_synced(r->opt, c))
                st = fb_runner_report_synced(r, b, c, r->synced_all, total_wrong,
                                             m->synced_iters);
            if (st == FB_OK && b->trial_values)
                st = fb_runner_report_trial_values(r, b, c, m, all, r->trial_all, total_wrong,
                                                   m->iters);
            if (st == FB_OK)
                mark_cpu_wait(r, c, waits, row0);
            if (st == FB_OK)
                st = flush_point(r);
            fb_run_record_unlock();
            if (st == FB_OK && batched && r->point_done)
                r->point_done(r->point_arg, b, c, all, w->size, r->opt->trials, m->iters);
            if (total_wrong > 0) /* a point, however many of its ranks are wrong */
                r->failed_points++;
            for (int k = 0; k < w->size; k++)
                if (fb_runner_is_active(c, k) && wrong[k] > 0) {
                    fb_error("%s %s %zu bytes: %lld wrong elements on rank %d", b->name, c->name,
                             c->bytes, wrong[k], k);
                }
        }
        if ((st = fb_world_agree(w, st)) != FB_OK)
            break;
    }
    fb_progress_end(r->progress);
out:
    free(waits);
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
    r->wait_points = r->busy_points = 0;
    r->busiest = 0.0;
    groups[0] = w->size;
    if (b->needs & FB_SCALES)
        ngroups = fb_runner_groups(r->opt, w->size, groups, FB_MAX_SIZES + 1);

    m.samples = calloc((size_t)r->opt->trials, sizeof *m.samples);
    m.synced = calloc((size_t)r->opt->trials, sizeof *m.synced);
    if (b->trial_values)
        m.trial = calloc((size_t)r->opt->trials * FB_MAX_VALUES, sizeof *m.trial);
    if (w->rank == 0) {
        if (r->opt->trials > r->all_trials) { /* sized for fewer trials: made again below */
            free(r->trial_all);
            free(r->synced_all);
            r->trial_all = r->synced_all = NULL;
            r->all_trials = r->opt->trials;
        }
        if (b->trial_values && !r->trial_all)
            r->trial_all = calloc((size_t)w->size * (size_t)r->opt->trials * FB_MAX_VALUES,
                                  sizeof *r->trial_all);
        all = calloc((size_t)w->size * (size_t)r->opt->trials, sizeof *all);
        wrong = calloc((size_t)w->size, sizeof *wrong);
        if (!r->each_all)
            r->each_all = calloc((size_t)w->size * MAX_EACH, sizeof *r->each_all);
        if (!r->values_all)
            r->values_all = calloc((size_t)w->size * FB_MAX_VALUES, sizeof *r->values_all);
        if (!r->synced_all)
            r->synced_all = calloc((size_t)w->size * (size_t)r->opt->trials,
                                   sizeof *r->synced_all);
    }
    st = (!m.samples || !m.synced || (b->trial_values && !m.trial) ||
          (w->rank == 0 && (!all || !wrong || !r->each_all || !r->values_all ||
                            !r->synced_all || (b->trial_values && !r->trial_all))))
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
    if (w->rank == 0 && r->busy_points > 0)
        fb_warn("%s: in %d of its %d points a rank waited for a CPU more than %.0f%% of the "
                "time (up to %.0f%%): other processes shared this run's CPUs, or it has more "
                "busy threads than CPUs; those figures measure a shared machine (results.csv's "
                "cpu_wait; compare does not judge a change against a run that waited otherwise)",
                b->name, r->busy_points, r->wait_points, 100.0 * FB_CPU_WAIT_BUSY,
                100.0 * r->busiest);
    st = fb_world_agree(w, st);
    MPI_Bcast(&r->failed_points, 1, MPI_INT, 0, w->comm);
    free(m.samples);
    free(m.synced);
    free(m.trial);
    free(all);
    free(wrong);
    return st;
}
