/* `fabricbench soak`'s orchestration (fleet layer, soak.h): one point measured again and again
 * through the runner, interval after interval, with every node's health counters read after each
 * (soak_health.c). Writes soak.csv (each rank's figures per interval, and the point's) and
 * health.csv, both on disk after every interval, and judges: a figure slower than its first
 * intervals beyond their noise (analysis/soak_rule.h), or a counter that moved, is "degraded"
 * (exit 1). It runs on `run`'s machinery: cli/cmd_soak.c parses soak's options and hands these
 * hooks to run's command (cli/run_mode.h), which brings the session, the run folder and the
 * watchdog. */
#define _POSIX_C_SOURCE 200809L
#include "soak.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomic_file.h"
#include "clock.h"
#include "csv.h"
#include "densenet.h"
#include "log.h"
#include "progress.h"
#include "registry.h"
#include "run_plan.h"
#include "run_record.h"
#include "runner.h"
#include "stats.h"
#include "units.h"
#include "watchdog.h"

static const char soak_header[] =
    "interval,start_s,rank,host,bench,case,ranks,bytes,iters,time_median_us,time_min_us,"
    "time_max_us,algbw_gbps,busbw_gbps,baseline_us,limit_us,verdict\n";

/* Rank 0, the runner's point_done hook: the point's samples kept for the interval. */
static void point_done(void *arg, const struct fb_bench *b, const struct fb_case *c,
                       const double *all, int nranks, long trials, long iters)
{
    struct fb_soak *k = arg;
    struct fb_soak_point *p;

    if (k->npts == FB_SOAK_MAX_POINTS) {
        k->too_many = true;
        return;
    }
    p = &k->pts[k->npts];
    /* room for the most trials an interval runs: fit_point changes the count between them */
    if (trials > k->trials ||
        (!p->all && !(p->all = malloc((size_t)nranks * (size_t)k->trials * sizeof *p->all)))) {
        k->too_many = true;
        return;
    }
    k->npts++;
    snprintf(p->bench, sizeof p->bench, "%s", b->name);
    snprintf(p->kase, sizeof p->kase, "%s", c->name);
    p->bytes = c->bytes;
    p->bus_factor = c->bus_factor;
    p->collective = c->report == FB_REPORT_COLLECTIVE;
    p->ranks = c->group > 0 ? c->group : nranks;
    p->iters = iters;
    p->trials = trials;
    p->it_us = 0.0;
    for (size_t j = 0; j < (size_t)nranks * (size_t)trials; j++)
        p->it_us = all[j] > p->it_us ? all[j] : p->it_us;
    memcpy(p->all, all, (size_t)nranks * (size_t)trials * sizeof *p->all);
}

static void cell(char *buf, size_t len, double v)
{
    if (isnan(v))
        buf[0] = '\0';
    else
        snprintf(buf, len, "%.6g", v);
}

/* Rank 0: a row of soak.csv. */
static void soak_row(struct fb_soak *k, int interval, double start, const char *rank,
                     const char *host, const struct fb_soak_point *p, const struct fb_stats *st,
                     double base, double limit, const char *verdict)
{
    char iv[16], t0[32], nr[16], bytes[32], iters[32], med[32], lo[32], hi[32], alg[32],
        bus[32], b[32], l[32];
    /* a collective on one rank crosses no fabric: its time, no bandwidth (as the run's rows) */
    double algbw = p->collective && p->ranks == 1 ? NAN : fb_gbps((double)p->bytes, st->median);
    const char *f[17] = {iv, t0, rank, host, p->bench, p->kase, nr, bytes, iters, med, lo,
                         hi, alg, bus, b, l, verdict};

    snprintf(iv, sizeof iv, "%d", interval);
    snprintf(t0, sizeof t0, "%.3f", start);
    snprintf(nr, sizeof nr, "%d", p->ranks);
    snprintf(bytes, sizeof bytes, "%zu", p->bytes);
    snprintf(iters, sizeof iters, "%ld", p->iters);
    cell(med, sizeof med, st->median);
    cell(lo, sizeof lo, st->min);
    cell(hi, sizeof hi, st->max);
    cell(alg, sizeof alg, algbw);
    cell(bus, sizeof bus, p->collective ? algbw * p->bus_factor : NAN);
    cell(b, sizeof b, base);
    cell(l, sizeof l, limit);
    fb_csv_row(k->csv, f, 17);
}

/* Rank 0, after interval i: each point's rows (every rank's own trials, then the point's:
 * the slowest rank of each trial) and its verdict against the baseline. */
static fb_status judge_interval(struct fb_soak *k, int interval, double start)
{
    double *slow = malloc((size_t)k->trials * sizeof *slow);
    int *flag = malloc((size_t)k->size * sizeof *flag);
    fb_status st = FB_OK;

    if (!slow || !flag) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    for (int i = 0; i < k->npts; i++) {
        struct fb_soak_point *p = &k->pts[i];
        struct fb_soak_series *s = &k->series[i];
        struct fb_stats stats;
        int slowest = 0;
        double worst = -1.0;
        const char *verdict = "baseline";
        bool idle = fb_soak_moves_nothing(p->collective, p->ranks, p->kase);

        for (int r = 0; r < k->size; r++) {
            char rk[16];
            flag[r] = p->all[(size_t)r * (size_t)p->trials] > 0.0;
            if (!flag[r] || fb_stats_compute(p->all + (size_t)r * (size_t)p->trials,
                                             (size_t)p->trials, &stats) != 0)
                continue;
            if (stats.median > worst)
                worst = stats.median, slowest = r;
            snprintf(rk, sizeof rk, "%d", r);
            soak_row(k, interval, start, rk, k->hosts[r], p, &stats, NAN, NAN, "");
        }
        fb_runner_slowest(p->all, flag, k->size, (size_t)p->trials, slow);
        if (fb_stats_compute(slow, (size_t)p->trials, &stats) != 0) {
            st = FB_ERR_NOMEM;
            goto out;
        }
        if (idle) {
            verdict = "not_judged";
        } else if (interval <= k->rule.baseline) {
            double *grown = realloc(s->base, (s->nbase + (size_t)p->trials) * sizeof *grown);
            if (!grown) {
                st = FB_ERR_NOMEM;
                goto out;
            }
            s->base = grown;
            memcpy(s->base + s->nbase, slow, (size_t)p->trials * sizeof *slow);
            s->nbase += (size_t)p->trials;
            if (interval == k->rule.baseline) {
                if ((st = fb_soak_baseline(s->base, s->nbase, &s->median, &s->mad)) != FB_OK)
                    goto out;
                s->limit = fb_soak_limit_us(&k->rule, s->median, s->mad);
                s->ready = true;
            }
        } else if (s->ready) {
            verdict = stats.median > s->limit ? "degraded" : "ok";
        }
        soak_row(k, interval, start, "all", "", p, &stats, s->ready ? s->median : NAN,
                 s->ready ? s->limit : NAN, verdict);
        if (strcmp(verdict, "degraded") == 0) {
            k->findings++;
            FB_SOAK_FINDING("rank %d on %s, interval %d (from %.1f s): %s %s %zu bytes on %d "
                            "rank(s): median %.1f us per iteration, above the limit %.1f us "
                            "(baseline %.1f us over intervals 1-%d); algbw %.4g GB/s",
                            slowest, k->hosts[slowest], interval, start, p->bench, p->kase,
                            p->bytes, p->ranks, stats.median, s->limit, s->median,
                            k->rule.baseline, fb_gbps((double)p->bytes, stats.median));
        }
    }
    if (fflush(k->csv) != 0 || fsync(fileno(k->csv)) != 0) {
        fb_error("cannot write soak.csv");
        st = FB_ERR_IO;
    }
out:
    free(slow);
    free(flag);
    return st;
}

/* Collective: each rank's host, to rank 0. */
static fb_status gather_hosts(struct fb_soak *k, const struct fb_world *w)
{
    fb_status st = FB_OK;

    if (w->rank == 0 && !(k->hosts = calloc((size_t)w->size, sizeof *k->hosts)))
        st = FB_ERR_NOMEM;
    if ((st = fb_world_agree(w, st)) != FB_OK)
        return st;
    MPI_Gather(w->host, 64, MPI_CHAR, k->hosts, 64, MPI_CHAR, 0, w->comm);
    for (int r = 0; w->rank == 0 && r < w->size; r++)
        k->hosts[r][63] = '\0';
    return FB_OK;
}

static fb_status open_soak_csv(struct fb_soak *k, const struct fb_run_ctx *ctx)
{
    char path[4300];
    fb_status st = FB_OK;

    if (ctx->s->world.rank == 0) {
        snprintf(path, sizeof path, "%s/soak.csv", ctx->res->dir);
        if (!(k->csv = fb_file_create(path)) || fputs(soak_header, k->csv) == EOF) {
            fb_error("cannot write '%s'", path);
            st = FB_ERR_IO;
        }
    }
    return fb_world_agree(&ctx->s->world, st);
}

/* Rank 0, after an interval: the next interval's trials and warm-up (plan[0], plan[1]), so that
 * a point whose iterations are long (a large all-reduce on a slow link: 1.2 s each) still fits
 * about 80% of an interval. A point's time is about (warm-up + 1 + 2 x trials) of its slowest
 * iteration when each trial is one iteration (calibration's round, the trials, and as many
 * timed one by one); points of short iterations keep --trials and --warm-up (next_interval
 * sizes their trials). At least one trial (the baseline's intervals give the spread, its first with 3):
 * when even that does not fit, said once; every interval then runs past its end by what it
 * needs. */
static void fit_point(struct fb_soak *k, double plan[2])
{
    double it = 0.0, budget = 0.8 * k->interval, t, w;
    const long least = 1;

    plan[0] = (double)k->trials;
    plan[1] = (double)k->warmup;
    for (int i = 0; i < k->npts; i++)
        it += k->pts[i].it_us / 1e6;
    if (it <= 0.0)
        return;
    w = fmin((double)k->warmup, floor(0.1 * k->interval / it));
    t = floor((budget - (w + 1.0) * it) / (2.0 * it));
    plan[0] = t < (double)least ? (double)least : t > (double)k->trials ? (double)k->trials : t;
    plan[1] = w;
    if (t < (double)least && !k->told) {
        k->told = true;
        fb_warn("soak: the interval's %d point(s) take about %.2f s (%ld trial(s) of one "
                "iteration each, %.3f s in all, and as many timed one by one), more than 80%% "
                "of the %g s interval: intervals run past their ends; give --interval %.0f or "
                "more, or a smaller --sizes", k->npts, (1.0 + 2.0 * (double)least) * it, least,
                it, k->interval, ceil((1.0 + 2.0 * (double)least) * it / 0.8));
    }
}

/* Test only (tests/cluster/soak.sh): FB_TEST_SOAK_GATE=K:FILE holds the soak after interval K
 * (its rows are in soak.csv) until FILE exists, 30 s at most, so a test changes the link between
 * two intervals and not inside a trial planned before the change (a trial planned for short
 * iterations runs for minutes once tc slows each of them, tests/cluster/soak.sh has the
 * figures: soak has no bound inside a trial). Rank 0 waits; the others wait in the broadcast
 * after it. */
static void test_gate(int i)
{
    const char *hook = getenv("FB_TEST_SOAK_GATE");
    char *end;
    long k;

    if (!hook || !*hook)
        return;
    k = strtol(hook, &end, 10);
    if (k != i || *end != ':' || !end[1])
        return;
    fprintf(stderr, "fabricbench: test hook FB_TEST_SOAK_GATE: held after interval %d until %s "
            "exists\n", i, end + 1);
    for (int n = 0; n < 3000 && access(end + 1, F_OK) != 0; n++)
        fb_clock_sleep_s(0.01);
}

/* Collective, after interval i ended at `now` (rank 0's clock): the next interval's trials and
 * warm-up (fit_point), its trial length, so the runner's point fills about 80% of an interval,
 * and the wait until its start; decided by rank 0 and sent to all in one broadcast. */
static void next_interval(struct fb_soak *k, const struct fb_run_ctx *ctx, int i, double t0,
                          double start, double now)
{
    /* trial-ms, the wait, trials, warm-up */
    double plan[4] = {ctx->opt->trial_ms, 0.0, (double)ctx->opt->trials,
                      (double)ctx->opt->warmup};

    if (ctx->s->world.rank == 0) {
        double took = now - t0 - start, scale = took > 0 ? 0.8 * k->interval / took : 2.0;
        fit_point(k, plan + 2);
        /* more trials share the interval's time: each shorter (fewer trials of a slow point
         * keep theirs, already below one iteration) */
        if (plan[2] > (double)ctx->opt->trials)
            plan[0] *= (double)ctx->opt->trials / plan[2];
        scale = scale < 0.5 ? 0.5 : scale > 2.0 ? 2.0 : scale;
        if (ctx->opt->iters == 0)
            plan[0] = fmax(0.01, plan[0] * scale);
        test_gate(i); /* after the plan: the hold is no part of the interval's time */
        plan[1] = fmax(0.0, t0 + i * k->interval - fb_clock_now_s());
    }
    MPI_Bcast(plan, 4, MPI_DOUBLE, 0, ctx->s->world.comm);
    ctx->opt->trial_ms = plan[0];
    ctx->opt->trials = (long)plan[2];
    ctx->opt->warmup = (long)plan[3];
    if (plan[1] > 0.0) {
        fb_watchdog_phase("soak: waiting for interval %d", i + 1);
        fb_clock_sleep_s(plan[1]);
    }
}

static void soak_release(struct fb_soak *k)
{
    for (int i = 0; i < FB_SOAK_MAX_POINTS; i++) {
        free(k->pts[i].all);
        free(k->series[i].base);
    }
    free(k->hosts);
    if (k->csv)
        fclose(k->csv);
}

int fb_soak_work(void *arg, const struct fb_run_ctx *ctx, fb_status *worst, char *stopped,
                     size_t stoppedlen)
{
    struct fb_soak *k = arg;
    const struct fb_world *w = &ctx->s->world;
    const struct fb_bench *b = fb_bench_find(ctx->opt->nbench ? ctx->opt->bench[0] : "allreduce");
    struct fb_soak_health health = {0};
    struct fb_runner runner;
    bool runner_up = false;
    double t0 = 0.0, start = 0.0;
    fb_status st;
    int i = 0, failed;

    k->size = w->size;
    k->trials = ctx->opt->trials;
    k->warmup = ctx->opt->warmup;
    /* the first interval knows nothing of the point's iterations: few of them (a slow one
     * then costs 8 iterations, not --trials'); fit_point sizes the others */
    ctx->opt->trials = k->trials < 3 ? k->trials : 3;
    ctx->opt->warmup = k->warmup < 1 ? k->warmup : 1;
    if ((st = gather_hosts(k, w)) != FB_OK || (st = open_soak_csv(k, ctx)) != FB_OK ||
        (st = fb_soak_health_open(&health, ctx, (const char(*)[64])k->hosts)) != FB_OK)
        goto out;
    if ((st = fb_runner_init(&runner, ctx->s, ctx->opt, ctx->res)) != FB_OK)
        goto out;
    runner_up = true;
    if (w->rank == 0) {
        runner.point_done = point_done;
        runner.point_arg = k;
        fb_info("soak: %s for %.0f s, %d interval(s) of %.0f s; baseline: intervals 1-%d", b->name,
                k->duration, k->intervals, k->interval, k->rule.baseline);
    }
    /* GPU telemetry over the whole soak, as over one benchmark of a run */
    fb_telemetry_bench_begin(ctx->tel, b->name, true);
    t0 = fb_clock_now_s();
    for (i = 1; i <= k->intervals; i++) {
        start = fb_clock_now_s() - t0;
        k->npts = 0;
        failed = runner.failed_points;
        st = fb_runner_run(&runner, b);
        /* wrong elements: the runner's error line names the rank; a finding of the interval */
        if (st == FB_OK && w->rank == 0 && runner.failed_points > failed) {
            k->findings++;
            FB_SOAK_FINDING("interval %d: %d point(s) failed verification (the error above "
                            "names the rank)", i, runner.failed_points - failed);
        }
        if (st == FB_ERR_UNSUPPORTED && w->rank == 0)
            fb_error("soak: %s cannot run here (see above)", b->name);
        if (st == FB_OK && w->rank == 0)
            st = k->too_many ? FB_ERR_USAGE : judge_interval(k, i, start);
        if (k->too_many && w->rank == 0)
            fb_error("soak: %s plans more than %d points per interval: name one size with "
                     "--sizes", b->name, FB_SOAK_MAX_POINTS);
        if ((st = fb_world_agree(w, st)) != FB_OK ||
            (st = fb_soak_health_interval(&health, i)) != FB_OK)
            break;
        if (i < k->intervals)
            next_interval(k, ctx, i, t0, start, fb_clock_now_s());
    }
    fb_watchdog_phase("telemetry gather");
    if (w->rank == 0)
        fb_run_record_lock();
    fb_telemetry_bench_end(ctx->tel, ctx->res);
    if (w->rank == 0)
        fb_run_record_unlock();
out:
    if (runner_up)
        fb_runner_release(&runner);
    *worst = st;
    if (st != FB_OK) {
        char why[160];
        fb_world_stop_reason(w, st, why, sizeof why);
        snprintf(stopped, stoppedlen, "soak: interval %d: %s", i, why);
        /* the failed rank and its error, as run names them (docs/timeouts.md); a plan refused
         * or a benchmark this machine cannot run was said above */
        if (w->rank == 0 && st != FB_ERR_USAGE && st != FB_ERR_UNSUPPORTED)
            fb_error("soak %s in interval %d: %s", st == FB_ERR_INTERRUPTED ? "interrupted"
                                                                            : "stopped", i, why);
    }
    if (w->rank == 0 && st == FB_OK) {
        int n = k->findings + health.findings;
        if (n)
            fb_out("soak: DEGRADED: %d finding(s) over %d interval(s) (see the lines above; "
                   "soak.csv, health.csv in %s)\n", n, k->intervals, ctx->res->dir);
        else
            fb_out("soak: healthy: %d interval(s), every figure within its limit, no health "
                   "counter moved (soak.csv, health.csv in %s)\n", k->intervals,
                   ctx->res->dir);
    }
    {
        int n = k->findings + health.findings;
        MPI_Bcast(&n, 1, MPI_INT, 0, w->comm);
        fb_soak_health_close(&health);
        soak_release(k);
        if (st != FB_OK)
            return fb_status_exit_code(st);
        return n ? 1 : 0;
    }
}

/* Before the run folder: the whole job, not a scaling curve, and at most FB_SOAK_MAX_POINTS points in
 * an interval, counted from the benchmark's plan on these ranks (bad usage writes nothing). A
 * collective's plan needs its communicator: one is made for the count and freed (with NCCL, one
 * more communicator set-up than the soak itself needs, seconds against its minutes). */
fb_status fb_soak_check(void *arg, struct fb_session *s, struct fb_options *o)
{
    const struct fb_bench *b = fb_bench_find(o->bench[0]);
    struct fb_runner runner;
    struct fb_progress count;
    fb_status st;

    (void)arg;
    if (o->ngroups == 0) {
        o->ngroups = 1;
        o->groups[0] = s->world.size;
    }
    fb_progress_init(&count, NULL, "");
    if ((st = fb_runner_init(&runner, s, o, NULL)) != FB_OK)
        return st;
    st = fb_run_plan_count(&runner, &b, 1, &count);
    fb_runner_release(&runner);
    if (st == FB_OK && count.total > FB_SOAK_MAX_POINTS) {
        if (s->world.rank == 0)
            fb_error("soak: %s plans %ld points per interval, more than %d: name one size with "
                     "--sizes", b->name, count.total, FB_SOAK_MAX_POINTS);
        st = FB_ERR_USAGE;
    }
    return st;
}

/* Before MPI: the benchmark, the DenseNet-121 point by default, and the trial length. */
fb_status fb_soak_prepare(void *arg, struct fb_options *o, char *err, size_t errlen)
{
    struct fb_soak *k = arg;
    const struct fb_bench *b;
    bool default_timeout;

    if (o->nbench > 1) {
        snprintf(err, errlen, "soak repeats one benchmark; %d named", o->nbench);
        return FB_ERR_USAGE;
    }
    /* named, so that run's machinery sees the one benchmark soak runs (its plan, env.json) */
    if (o->nbench == 0)
        o->bench[o->nbench++] = "allreduce";
    /* soak judges each trial's slowest rank in batches; OSU's per-iteration timing is run's */
    if (strcmp(o->timing, "batch") != 0) {
        snprintf(err, errlen, "--timing %s is run's; soak times in batches", o->timing);
        return FB_ERR_USAGE;
    }
    b = fb_bench_find(o->bench[0]);
    if (!b || (b->needs & FB_REPORTS_VALUES)) {
        snprintf(err, errlen, "soak times a point; '%s' reports figures, not times", o->bench[0]);
        return FB_ERR_USAGE;
    }
    /* No --timeout given (the parser's default for the default trial): each phase may last an
     * interval, so the default becomes twice the interval and a minute. A --timeout equal to
     * that default is taken as not given. */
    default_timeout = o->timeout_s == fb_options_timeout_default(o->trial_ms);
    if (!default_timeout && o->timeout_s > 0 && o->timeout_s <= k->interval) {
        snprintf(err, errlen, "--timeout %g s is not longer than --interval %g s: the wait "
                 "between intervals would time out", o->timeout_s, k->interval);
        return FB_ERR_USAGE;
    }
    if (strcmp(b->name, "allreduce") == 0 && o->nsizes == 0 && !o->min_bytes && !o->max_bytes) {
        struct fb_densenet d;
        fb_status st = fb_densenet121(o->classes, &d);
        if (st != FB_OK) {
            snprintf(err, errlen, "DenseNet-121: %s", fb_status_str(st));
            return st;
        }
        /* the gradients' bytes (27872824 with 14 classes in float32), whole elements */
        o->sizes[0] = d.parameters * fb_dtype_size(o->dtype);
        o->nsizes = 1;
        fb_densenet_free(&d);
    }
    /* about a third of the interval in trials; as much again in the iterations timed one by
     * one; next_interval() then scales it so the point fills about 80% of each interval */
    o->trial_ms = fmax(0.01, k->interval * 1e3 * 0.35 / (double)o->trials);
    if (default_timeout)
        o->timeout_s = fmax(fb_options_timeout_default(o->trial_ms), 2 * k->interval + 60);
    return FB_OK;
}
