/* `fabricbench locate`'s phase 2: the tournament of disjoint node pairs (locate_plan.h), the
 * retests of what looked slow against healthy partners, and the verdicts (locate_judge.h). */
#define _POSIX_C_SOURCE 200809L
#include "locate_run.h"

#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "locate.h"
#include "locate_judge.h"
#include "locate_plan.h"
#include "log.h"

/* Pairings over world ranks from node rounds: round r pairs the lead ranks of partner nodes. */
static fb_status rounds_to_pairings(const struct loc *l, const struct fb_locate_rounds *rd,
                                    const char *prefix, struct fb_pairing **out, int **tables)
{
    int size = l->s.world.size;
    struct fb_pairing *p = calloc((size_t)(rd->nrounds ? rd->nrounds : 1), sizeof *p);
    int *t = malloc(((size_t)rd->nrounds * (size_t)size + 1) * sizeof *t);

    *out = p;
    *tables = t;
    if (!p || !t)
        return FB_ERR_NOMEM;
    for (int r = 0; r < rd->nrounds; r++) {
        int *row = t + (size_t)r * (size_t)size;
        for (int k = 0; k < size; k++)
            row[k] = -1;
        for (int i = 0; i < l->nodes; i++) {
            int j = rd->partner[(size_t)r * (size_t)l->nodes + (size_t)i];
            if (j >= 0)
                row[l->lead[i]] = l->lead[j];
        }
        snprintf(p[r].name, sizeof p[r].name, "%s%d", prefix, r + 1);
        p[r].partner = row;
    }
    return FB_OK;
}

/* ---- phase 2: the tournament and the retests ---- */

/* Rank 0: the pair i-j's figure in the round `kase` (fb_locate_pair_figure), and each end's. */
static double pair_value(struct loc *l, size_t first, const char *kase, int i, int j, double *vi,
                         double *vj)
{
    *vi = loc_rank_figure(&l->res, first, "locate_pairs", kase, "bandwidth", l->lead[i]);
    *vj = loc_rank_figure(&l->res, first, "locate_pairs", kase, "bandwidth", l->lead[j]);
    return fb_locate_pair_figure(*vi, *vj);
}

/* Collective: runs rounds (the same on every rank) as pairings named prefix1, prefix2, ... */
static fb_status run_rounds(struct loc *l, struct fb_runner *r, const struct fb_locate_rounds *rd,
                            const char *prefix)
{
    struct fb_pairing *p = NULL;
    int *tables = NULL;
    fb_status st = rounds_to_pairings(l, rd, prefix, &p, &tables);

    if ((st = fb_world_agree(&l->s.world, st)) == FB_OK && rd->nrounds > 0)
        st = loc_run_bench(l, r, &fb_bench_locate_pairs, p, (size_t)rd->nrounds);
    free(p);
    free(tables);
    return st;
}

/* Rank 0 -> all: the retest rounds rank 0 planned, sent to every rank. */
static fb_status share_rounds(const struct fb_world *w, struct fb_locate_rounds *rd, int nodes)
{
    int n = w->rank == 0 ? rd->nrounds : 0;

    MPI_Bcast(&n, 1, MPI_INT, 0, w->comm);
    if (w->rank != 0) {
        memset(rd, 0, sizeof *rd);
        rd->nodes = nodes;
        rd->nrounds = n;
        if (!(rd->partner = malloc(((size_t)n * (size_t)nodes + 1) * sizeof *rd->partner)))
            return FB_ERR_NOMEM; /* the agreement after the broadcast stops every rank */
    }
    if (n > 0)
        MPI_Bcast(rd->partner, n * nodes, MPI_INT, 0, w->comm);
    return FB_OK;
}

/* Rank 0: how node x fared against the healthy partners of the retest rounds (not the pair
 * partners of `skip`, -1 none): *slow of *tested retests were suspect; their figures in text. */
static void retest_partners(struct loc *l, size_t first, const struct fb_locate_rounds *rd,
                            const struct fb_locate_pair *p, size_t np, double mad, int x,
                            int skip, int *slow, int *tested, char *text, size_t len)
{
    size_t used = 0;

    *slow = *tested = 0;
    text[0] = '\0';
    for (int k = 0; k < rd->nrounds; k++) {
        int y = rd->partner[(size_t)k * (size_t)l->nodes + (size_t)x];
        char name[32];
        double vx, vy, v, typ;
        bool bad;
        if (y < 0 || y == skip)
            continue;
        snprintf(name, sizeof name, "retest%d", k + 1);
        v = pair_value(l, first, name, x, y, &vx, &vy);
        if (isnan(v))
            continue;
        /* against the partner's own median pair in the tournament, not the typical one */
        typ = fb_locate_node_median(y, p, np, -1);
        bad = fb_locate_is_suspect(v, isnan(typ) ? l->phase2_typical : typ, mad, l->tolerance,
                                   true);
        (*tested)++;
        *slow += bad;
        if (used < len)
            used += (size_t)snprintf(text + used, len - used, "%s%s %.3g", used ? ", " : "",
                                     l->name[y], v);
    }
}

/* Rank 0: the figure of the pair a-b retested alone (NaN when it was not). */
static double retest_alone(struct loc *l, size_t first, const struct fb_locate_rounds *rd,
                           int a, int b)
{
    for (int k = 0; k < rd->nrounds; k++)
        if (rd->partner[(size_t)k * (size_t)l->nodes + (size_t)a] == b) {
            char name[32];
            double va, vb;
            snprintf(name, sizeof name, "retest%d", k + 1);
            return pair_value(l, first, name, a, b, &va, &vb);
        }
    return NAN;
}

/* Rank 0: the tournament's pairs p[0..np) followed by every pair of the retest rounds; *n of
 * them. NULL when out of memory. */
static struct fb_locate_pair *all_pairs(struct loc *l, size_t first,
                                        const struct fb_locate_rounds *rd,
                                        const struct fb_locate_pair *p, size_t np, size_t *n)
{
    size_t cap = np + (size_t)rd->nrounds * (size_t)l->nodes / 2 + 1;
    struct fb_locate_pair *all = malloc(cap * sizeof *all);

    *n = 0;
    if (!all)
        return NULL;
    memcpy(all, p, np * sizeof *p);
    *n = np;
    for (int k = 0; k < rd->nrounds; k++)
        for (int i = 0; i < l->nodes; i++) {
            int j = rd->partner[(size_t)k * (size_t)l->nodes + (size_t)i];
            char name[32];
            double vi, vj, v;
            if (j <= i)
                continue;
            snprintf(name, sizeof name, "retest%d", k + 1);
            if (!isnan(v = pair_value(l, first, name, i, j, &vi, &vj)))
                all[(*n)++] = (struct fb_locate_pair){i, j, v};
        }
    return all;
}

static bool add_verdict(struct loc *l, const char *kind, int node, int peer, double measured,
                        const char *fmt_evidence)
{
    struct loc_suspect s = {.node = node, .peer = peer, .rank = -1, .measured = measured,
                            .typical = l->phase2_typical};

    snprintf(s.kind, sizeof s.kind, "%s", kind);
    snprintf(s.bench, sizeof s.bench, "locate_pairs");
    snprintf(s.metric, sizeof s.metric, "bandwidth");
    snprintf(s.evidence, sizeof s.evidence, "%s", fmt_evidence);
    return loc_suspect_add(l, &s);
}

/* Rank 0: the verdicts after the retests. A node is named when its retests are slow against
 * every healthy partner's own median pair and its median over all its pairs (tournament and
 * retests) is slow against the typical pair; a link when the pair alone is far below both ends'
 * medians over their other pairs, and neither end's median is slow (fb_locate_decide_link). */
static fb_status decide_pairs(struct loc *l, size_t first, const struct fb_locate_rounds *rd,
                              const struct fb_locate_pair *p, size_t np, const bool *slow,
                              const bool *cand, const bool *link, double mad)
{
    char with[120], ev[400];
    int nslow, tested, which;
    size_t nall;
    struct fb_locate_pair *all = all_pairs(l, first, rd, p, np, &nall);
    bool ok = all != NULL, *named = calloc((size_t)l->nodes, sizeof *named);
    double typ = l->phase2_typical;

    for (int x = 0; ok && named && x < l->nodes; x++) {
        int bad = 0, n = 0;
        double med;
        if (!cand[x])
            continue;
        for (size_t k = 0; k < np; k++)
            if (p[k].a == x || p[k].b == x) {
                n++;
                bad += slow[k];
            }
        retest_partners(l, first, rd, p, np, mad, x, -1, &nslow, &tested, with, sizeof with);
        med = fb_locate_node_median(x, all, nall, -1);
        if (fb_locate_decide_node(nslow, tested) == FB_LOCATE_NODE &&
            fb_locate_is_suspect(med, typ, mad, l->tolerance, true)) {
            snprintf(ev, sizeof ev, "%d of its %d links slow, its median pair %.3g GB/s; retested "
                     "with %s GB/s against a typical pair of %.3g GB/s", bad, n, med, with, typ);
            ok = add_verdict(l, "node", x, -1, med, ev);
            named[x] = true;
        } else if (tested) { /* slow with some partners, or its median pair is not slow */
            fb_info("locate: %s had %d of its %d links slow, but its retests (%s GB/s) and its "
                    "median pair (%.3g GB/s against %.3g) do not make it slow: not named",
                    l->name[x], bad, n, with, med, typ);
        }
    }
    for (size_t k = 0; ok && named && k < np; k++) {
        int a = p[k].a, b = p[k].b, sa, ta, sb, tb;
        double alone, ma, mb, ra, rb;
        char wa[80], wb[80];
        if (!link[k] || named[a] || named[b])
            continue;
        alone = retest_alone(l, first, rd, a, b);
        retest_partners(l, first, rd, p, np, mad, a, b, &sa, &ta, wa, sizeof wa);
        retest_partners(l, first, rd, p, np, mad, b, a, &sb, &tb, wb, sizeof wb);
        /* each end's median over its other pairs: the link against them, the end against the
         * typical pair (one retest read low by two-way TCP does not make a node slow) */
        ma = fb_locate_node_median(a, all, nall, b);
        mb = fb_locate_node_median(b, all, nall, a);
        ra = isnan(ma) ? typ : ma;
        rb = isnan(mb) ? typ : mb;
        switch (fb_locate_decide_link(!isnan(alone) &&
                                      fb_locate_is_suspect(alone, ra, 0.0, l->tolerance, true) &&
                                      fb_locate_is_suspect(alone, rb, 0.0, l->tolerance, true),
                                      sa > 0 && fb_locate_is_suspect(ra, typ, mad, l->tolerance,
                                                                     true),
                                      sb > 0 && fb_locate_is_suspect(rb, typ, mad, l->tolerance,
                                                                     true),
                                      &which)) {
        case FB_LOCATE_LINK:
            snprintf(ev, sizeof ev, "%.3g GB/s in the tournament, %.3g alone, against a typical "
                     "pair of %.3g; %s with %s, %s with %s: not slow (median pairs %.3g, %.3g)",
                     p[k].value, alone, typ, l->name[a], ta ? wa : "untested", l->name[b],
                     tb ? wb : "untested", ra, rb);
            ok = add_verdict(l, "link", a, b, alone, ev);
            break;
        case FB_LOCATE_NODE:
            for (int e = 0; ok && e < 2; e++)
                if ((which == 2 || which == e) && !named[e ? b : a]) {
                    snprintf(ev, sizeof ev, "slow with %s (%.3g GB/s alone) and with healthy "
                             "partners (%s GB/s), its median pair %.3g, against a typical pair "
                             "of %.3g", l->name[e ? a : b], alone, e ? wb : wa, e ? rb : ra,
                             typ);
                    ok = add_verdict(l, "node", e ? b : a, -1, e ? rb : ra, ev);
                    named[e ? b : a] = true;
                }
            break;
        case FB_LOCATE_NOISE: break;
        }
    }
    ok = ok && named;
    free(all);
    free(named);
    return ok ? FB_OK : FB_ERR_NOMEM;
}

/* Collective: the tournament, then the retests of what looked slow. */
fb_status loc_phase_pairs(struct loc *l, struct fb_runner *r)
{
    const struct fb_world *w = &l->s.world;
    struct fb_locate_rounds plan = {0}, re = {0};
    struct fb_locate_pair *p = NULL;
    bool *slow = NULL, *link = NULL, *cand = NULL, *healthy = NULL;
    int *want = NULL, (*pairs)[2] = NULL, npairs = 0;
    size_t np = 0, first = w->rank == 0 ? l->res.nrows : 0;
    double t0 = fb_clock_now_us(), mad;
    fb_status st;

    if (l->nodes < 2)
        return FB_OK;
    st = fb_locate_plan(l->nodes, 0, 0, FB_LOCATE_SEED, &plan);
    if ((st = fb_world_agree(w, st)) != FB_OK)
        return st;
    l->full_rounds = plan.full;
    l->rounds = plan.nrounds;
    l->sampled = plan.sampled;
    if (w->rank == 0)
        fb_info("locate: %d node(s), %d round(s) of disjoint pairs%s", l->nodes, plan.nrounds,
                plan.sampled ? " (a sample of the tournament)" : "");
    /* The tournament twice, a pass after the other: each pair's figure is its better pass, so
     * a burst of load elsewhere during one round is not a suspect (a slow part is slow in both). */
    if ((st = run_rounds(l, r, &plan, "round")) != FB_OK ||
        (st = run_rounds(l, r, &plan, "again")) != FB_OK)
        goto out;
    l->round_s = (fb_clock_now_us() - t0) / 1e6 / (2.0 * (plan.nrounds ? plan.nrounds : 1));
    l->phase_s[1] = (fb_clock_now_us() - t0) / 1e6;
    if (w->rank == 0) {
        size_t cap = (size_t)plan.nrounds * (size_t)l->nodes / 2 + 1;
        loc_table_lock(); /* the heat map's cells and the typical pair (loc_write_stopped) */
        p = calloc(cap, sizeof *p);
        slow = calloc(cap, sizeof *slow);
        link = calloc(cap, sizeof *link);
        cand = calloc((size_t)l->nodes, sizeof *cand);
        healthy = calloc((size_t)l->nodes, sizeof *healthy);
        want = calloc((size_t)l->nodes, sizeof *want);
        pairs = calloc(cap, sizeof *pairs);
        st = p && slow && link && cand && healthy && want && pairs ? FB_OK : FB_ERR_NOMEM;
        for (int k = 0; st == FB_OK && k < plan.nrounds; k++)
            for (int i = 0; i < l->nodes; i++) {
                int j = plan.partner[(size_t)k * (size_t)l->nodes + (size_t)i];
                char name[32];
                double vi, vj, v, wi, wj, again;
                if (j <= i)
                    continue;
                snprintf(name, sizeof name, "round%d", k + 1);
                v = pair_value(l, first, name, i, j, &vi, &vj);
                snprintf(name, sizeof name, "again%d", k + 1);
                again = pair_value(l, first, name, i, j, &wi, &wj);
                if (!isnan(again) && (isnan(v) || again > v)) {
                    v = again;
                    vi = wi;
                    vj = wj;
                }
                l->heat[(size_t)i * (size_t)l->nodes + (size_t)j] = vi;
                l->heat[(size_t)j * (size_t)l->nodes + (size_t)i] = vj;
                p[np++] = (struct fb_locate_pair){i, j, isnan(v) ? 0.0 : v};
            }
        if (st == FB_OK && np)
            st = fb_locate_classify(l->nodes, p, np, l->tolerance, slow, cand,
                                    &l->phase2_typical, &mad);
        /* Retests: each node candidate against two healthy partners; each other slow pair
         * alone, and each of its ends against one healthy partner. */
        for (int i = 0; st == FB_OK && i < l->nodes; i++)
            healthy[i] = !cand[i];
        /* A link candidate: a slow pair far below both ends' other pairs (a slow node's pairs
         * are not: its other pairs are as slow), even with a node candidate at one end (one
         * pair read low besides the link can make an end's median look slow). A node whose
         * only slow pairs are with node candidates is healthy. */
        for (size_t k = 0; st == FB_OK && k < np; k++) {
            link[k] = slow[k] && fb_locate_link_like(p, np, k, l->tolerance);
            if (slow[k] && !cand[p[k].a] && !cand[p[k].b])
                healthy[p[k].a] = healthy[p[k].b] = false;
            if (link[k]) {
                healthy[p[k].a] = healthy[p[k].b] = false;
                pairs[npairs][0] = p[k].a;
                pairs[npairs++][1] = p[k].b;
                want[p[k].a] = want[p[k].a] > 1 ? want[p[k].a] : 1;
                want[p[k].b] = want[p[k].b] > 1 ? want[p[k].b] : 1;
            }
        }
        for (int i = 0; st == FB_OK && i < l->nodes; i++)
            if (cand[i])
                want[i] = 2;
        if (st == FB_OK)
            st = fb_locate_retests(l->nodes, want, healthy, (const int(*)[2])pairs,
                                   (size_t)npairs, &re);
        loc_table_unlock();
    }
    if ((st = fb_world_agree(w, st)) != FB_OK || (st = share_rounds(w, &re, l->nodes)) != FB_OK)
        goto out;
    if ((st = fb_world_agree(w, st)) != FB_OK)
        goto out;
    l->retest_rounds = re.nrounds;
    t0 = fb_clock_now_us();
    first = w->rank == 0 ? l->res.nrows : 0;
    if (re.nrounds > 0 && (st = run_rounds(l, r, &re, "retest")) != FB_OK)
        goto out;
    l->phase_s[2] = (fb_clock_now_us() - t0) / 1e6;
    if (w->rank == 0 && re.nrounds > 0) {
        loc_table_lock();
        st = decide_pairs(l, first, &re, p, np, slow, cand, link,
                          l->nodes >= FB_LOCATE_MAD_NODES ? mad : 0.0);
        loc_table_unlock();
    }
    st = fb_world_agree(w, st);
out:
    fb_locate_rounds_release(&plan);
    fb_locate_rounds_release(&re);
    free(p);
    free(slow);
    free(link);
    free(cand);
    free(healthy);
    free(want);
    free(pairs);
    return st;
}

