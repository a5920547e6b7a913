/* Counting a run's points before it starts, and naming a point for the progress lines. */
#include "run_plan.h"

#include <stdlib.h>

#include "units.h"

fb_status fb_run_plan_count(struct fb_runner *r, const struct fb_bench *const *list, size_t n,
                            struct fb_progress *p)
{
    const struct fb_world *w = &r->s->world;
    fb_status st = FB_OK;

    for (size_t i = 0; i < n && st == FB_OK; i++) {
        const struct fb_bench *b = list[i];
        int groups[FB_MAX_SIZES + 1], ngroups = 1;
        long points = 0;

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
            struct fb_ctx ctx = {.s = r->s, .be = r->s->be, .opt = r->opt, .ranks = groups[g],
                                 .comm = w->comm, .world_coll = r->coll_comm,
                                 .node_of = r->node_of};
            struct fb_case *cases = NULL;
            size_t ncases = 0;

            st = fb_world_agree(w, b->plan(&ctx, &cases, &ncases));
            points += (long)ncases;
            free(cases);
        }
        if (st == FB_OK)
            st = fb_progress_plan(p, b->name, points);
    }
    return st;
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
