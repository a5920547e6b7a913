/* Counting a run's points before it starts, naming a point for the progress lines, and a dry
 * run's floor of each benchmark's time. */
#include "run_plan.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "runner_impl.h"
#include "units.h"

/* Every benchmark's plan on every group of its scaling curve, made by `be`, handed to `visit`
 * (bench index, group size, its cases). Collective. */
typedef void (*plan_visit)(void *arg, size_t i, int ranks, const struct fb_case *cases,
                           size_t ncases);

static fb_status each_plan(struct fb_runner *r, const struct fb_backend *be,
                           const struct fb_bench *const *list, size_t n, plan_visit visit,
                           void *arg)
{
    const struct fb_world *w = &r->s->world;
    fb_status st = FB_OK;

    for (size_t i = 0; i < n && st == FB_OK; i++) {
        const struct fb_bench *b = list[i];
        int groups[FB_MAX_SIZES + 1], ngroups = 1;

        if (w->size < b->min_ranks)
            continue;
        if ((b->needs & FB_NEEDS_COLL) && !r->coll_comm) {
            st = r->s->coll->comm_create(w->comm, r->s->be, &r->coll_comm);
            if ((st = fb_world_agree(w, st)) != FB_OK)
                break;
        }
        groups[0] = w->size;
        if (b->needs & FB_SCALES)
            ngroups = fb_runner_groups(r->opt, w->size, groups, FB_MAX_SIZES + 1);
        for (int g = 0; g < ngroups && st == FB_OK; g++) {
            /* A plan reads the group's size, never its communicators. */
            struct fb_ctx ctx = {.s = r->s, .be = be, .opt = r->opt, .ranks = groups[g],
                                 .comm = w->comm, .world_coll = r->coll_comm,
                                 .node_of = r->node_of};
            struct fb_case *cases = NULL;
            size_t ncases = 0;

            st = fb_world_agree(w, b->plan(&ctx, &cases, &ncases));
            if (st == FB_OK)
                visit(arg, i, groups[g], cases, ncases);
            free(cases);
        }
    }
    return st;
}

static void count_points(void *arg, size_t i, int ranks, const struct fb_case *cases,
                         size_t ncases)
{
    (void)i;
    (void)ranks;
    (void)cases;
    *(long *)arg += (long)ncases;
}

fb_status fb_run_plan_count(struct fb_runner *r, const struct fb_bench *const *list, size_t n,
                            struct fb_progress *p)
{
    fb_status st = FB_OK;

    for (size_t i = 0; i < n && st == FB_OK; i++) {
        long points = 0;
        if (r->s->world.size < list[i]->min_ranks)
            continue;
        st = each_plan(r, r->s->be, &list[i], 1, count_points, &points);
        if (st == FB_OK)
            st = fb_progress_plan(p, list[i]->name, points);
    }
    return st;
}

double fb_run_plan_case_floor(const struct fb_options *o, const struct fb_case *c,
                              const struct fb_plan_device *dev)
{
    double trial = o->trial_ms / 1e3, it = c->busy_us / 1e6, total, calib = 0.0, iters;
    double flops = c->flops + c->work_flops;

    if (dev->tflops > 0 && flops / (dev->tflops * 1e12) > it)
        it = flops / (dev->tflops * 1e12);
    if (dev->gbps > 0 && !c->bytes_label && (double)c->bytes / (dev->gbps * 1e9) > it)
        it = (double)c->bytes / (dev->gbps * 1e9);
    total = (double)o->warmup * it;
    if (fb_runner_batched(o, c)) {
        if (o->iters > 0) {
            iters = (double)o->iters;
        } else if (it <= 0.0) {
            /* nothing known of an iteration: calibration's deciding round lasts a fifth of a
             * trial at least, and each trial a trial */
            calib = trial / 5;
            iters = 0.0;
            total += (double)o->trials * trial;
        } else {
            /* calibrate()'s rounds, by its own rule */
            bool again = false;
            for (long k = fb_calib_first(c); k > 0;) {
                calib += (double)k * it;
                if (again)
                    break;
                k = fb_calib_next(k, (double)k * it * 1e6, trial * 1e6, &again);
            }
            iters = (double)fb_calib_iters(it * 1e6, trial * 1e6, c->min_iters);
        }
        total += calib + (double)o->trials * iters * it;
        if (c->report == FB_REPORT_COLLECTIVE && iters > 0)
            total += (iters * (double)o->trials < MAX_EACH ? iters * (double)o->trials
                                                           : MAX_EACH) * it;
    }
    if (fb_runner_synced(o, c)) /* calibrated to --trial-ms as well, barriers included */
        total += (double)o->trials * (o->iters > 0 ? (double)o->iters * it : trial) +
                 (o->iters > 0 ? 0.0 : trial / 5);
    return total;
}

struct floor_sum {
    const struct fb_bench *const *list;
    const struct fb_options *o;
    const struct fb_plan_device *dev;
    long *points;
    double *secs;
};

static void add_floor(void *arg, size_t i, int ranks, const struct fb_case *cases,
                      size_t ncases)
{
    struct floor_sum *f = arg;

    (void)ranks;
    f->points[i] += (long)ncases;
    if (f->list[i]->needs & FB_REPORTS_VALUES)
        return; /* found, not timed */
    for (size_t k = 0; k < ncases; k++)
        f->secs[i] += fb_run_plan_case_floor(f->o, &cases[k], f->dev);
}

fb_status fb_run_plan_floor(struct fb_runner *r, const struct fb_backend *be,
                            const struct fb_bench *const *list, size_t n,
                            const struct fb_plan_device *dev, long *points, double *secs)
{
    struct floor_sum f = {list, r->opt, dev, points, secs};

    for (size_t i = 0; i < n; i++) {
        points[i] = 0;
        secs[i] = 0.0;
    }
    return each_plan(r, be, list, n, add_floor, &f);
}

void fb_run_plan_label(const char *bench, const struct fb_case *c, int ranks, char *buf,
                       size_t len)
{
    char size[48] = "", who[32];
    size_t n = 0;

    /* the batch, else the message size; a size that labels the point (step's fusion
     * threshold) is shown beside its batch, where a batch's own bytes are not */
    if (c->batch > 0)
        n = (size_t)snprintf(size, sizeof size, " b%ld", c->batch);
    if (c->bytes > 0 && (c->batch <= 0 || c->bytes_label) && n + 2 < sizeof size) {
        size[n] = ' ';
        fb_size_format(c->bytes, size + n + 1, sizeof size - n - 1);
    }
    if (c->active == FB_ALL_RANKS)
        snprintf(who, sizeof who, "x%d rank%s", ranks, ranks == 1 ? "" : "s");
    else if (c->pair)
        snprintf(who, sizeof who, "%d>%d", c->active, c->peer);
    else
        snprintf(who, sizeof who, "rank %d", c->active);
    snprintf(buf, len, "%s %s%s %s", bench, c->name, size, who);
}

void fb_run_plan_begin(struct fb_progress *p, const char *bench, const struct fb_case *c,
                       int ranks)
{
    char label[160];

    if (!p)
        return;
    fb_run_plan_label(bench, c, ranks, label, sizeof label);
    fb_progress_begin(p, bench, label);
}
