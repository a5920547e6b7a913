/* locate's statistics and decisions: median and MAD of comparable measurements, the suspects
 * among them, the tournament's node candidates and the verdicts after the retests. */
#include "locate_judge.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

fb_status fb_locate_typical(const double *v, size_t n, double *median, double *mad)
{
    if (n == 0) {
        *median = *mad = 0.0;
        return FB_ERR_USAGE;
    }
    return fb_stats_median_mad(v, n, median, mad) == 0 ? FB_OK : FB_ERR_NOMEM;
}

bool fb_locate_is_suspect(double value, double median, double mad, double tol_pct,
                          bool higher_is_better)
{
    double keep = 1.0 - tol_pct / 100.0, spread = FB_LOCATE_MAD_K * 1.4826 * mad;

    if (isnan(value) || (higher_is_better && value <= 0.0))
        return higher_is_better;
    if (keep <= 0.0)
        return false;
    if (higher_is_better)
        return value < median * keep && value < median - spread;
    return value > median / keep && value > median + spread;
}

fb_status fb_locate_rate_suspect(double value, const double *others, size_t n, double tol_pct,
                                 bool *suspect, double *median)
{
    double *lg, lmed, lmad, mad;
    size_t m = 0;
    fb_status st;

    *suspect = false;
    *median = NAN;
    if (n == 0)
        return FB_OK;
    if ((st = fb_locate_typical(others, n, median, &mad)) != FB_OK)
        return st;
    if (isnan(value) || value <= 0.0) {
        *suspect = true;
        return FB_OK;
    }
    if (!(lg = malloc(n * sizeof *lg)))
        return FB_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        if (others[i] > 0.0 && isfinite(others[i]))
            lg[m++] = log(others[i]);
    /* others with no positive rate have nothing to compare with */
    st = m ? fb_locate_typical(lg, m, &lmed, &lmad) : FB_OK;
    if (st == FB_OK && m && *median > 0.0)
        *suspect = value < *median * (1.0 - tol_pct / 100.0) &&
                   log(value) < log(*median) - FB_LOCATE_MAD_K * 1.4826 * lmad;
    free(lg);
    return st;
}

/* The median of node i's pairs, for every node; NaN for a node without pairs. */
static fb_status node_figures(int nodes, const struct fb_locate_pair *p, size_t n, double *fig)
{
    double *v = malloc((n ? n : 1) * sizeof *v), unused;
    fb_status st = FB_OK;

    if (!v)
        return FB_ERR_NOMEM;
    for (int i = 0; i < nodes && st == FB_OK; i++) {
        size_t m = 0;
        for (size_t k = 0; k < n; k++)
            if (p[k].a == i || p[k].b == i)
                v[m++] = p[k].value;
        fig[i] = NAN;
        if (m)
            st = fb_locate_typical(v, m, &fig[i], &unused);
    }
    free(v);
    return st;
}

fb_status fb_locate_classify(int nodes, const struct fb_locate_pair *p, size_t n, double tol_pct,
                             bool *slow, bool *node_cand, double *median, double *mad)
{
    double *fig = malloc((size_t)(nodes > 0 ? nodes : 1) * sizeof *fig);
    int *bad = calloc((size_t)(nodes > 0 ? nodes : 1), sizeof *bad);
    double *other = malloc((size_t)(nodes > 0 ? nodes : 1) * sizeof *other);
    size_t m = 0;
    fb_status st = FB_OK;

    *median = *mad = 0.0;
    if (!fig || !bad || !other) {
        st = FB_ERR_NOMEM;
        goto out;
    }
    if (n == 0) {
        st = FB_ERR_USAGE;
        goto out;
    }
    /* The typical pair: the median over the nodes of each node's median pair, so the pairs of
     * one slow node (n - 1 of them, half of all pairs with 3 nodes) cannot pull it down. */
    if ((st = node_figures(nodes, p, n, fig)) != FB_OK)
        goto out;
    for (int i = 0; i < nodes; i++)
        if (!isnan(fig[i]))
            fig[m++] = fig[i];
    if ((st = fb_locate_typical(fig, m, median, mad)) != FB_OK)
        goto out;
    for (size_t k = 0; k < n; k++) {
        /* one pair between two nodes: nothing to compare it with; below FB_LOCATE_MAD_NODES
         * nodes a slow node's own figure is among the few that make the MAD */
        slow[k] = m > 2 && fb_locate_is_suspect(p[k].value, *median,
                                                m >= FB_LOCATE_MAD_NODES ? *mad : 0.0, tol_pct,
                                                true);
        if (slow[k]) {
            bad[p[k].a]++;
            bad[p[k].b]++;
        }
    }
    /* A node candidate: its median pair against the other nodes' (the median over all pairs,
     * so one slow link, or one pair read low by two-way TCP, does not make a node slow). */
    if ((st = node_figures(nodes, p, n, fig)) != FB_OK)
        goto out;
    for (int i = 0; i < nodes; i++) {
        double others, spread;
        size_t o = 0;
        node_cand[i] = false;
        if (isnan(fig[i]) || m <= 2)
            continue;
        for (int j = 0; j < nodes; j++)
            if (j != i && !isnan(fig[j]))
                other[o++] = fig[j];
        if ((st = fb_locate_typical(other, o, &others, &spread)) != FB_OK)
            goto out;
        node_cand[i] = bad[i] >= 1 &&
                       fb_locate_is_suspect(fig[i], others, m >= FB_LOCATE_MAD_NODES ? spread
                                            : 0.0, tol_pct, true);
    }
out:
    free(other);
    free(fig);
    free(bad);
    return st;
}

double fb_locate_pair_figure(double a, double b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    return (a + b) / 2.0;
}

double fb_locate_node_median(int x, const struct fb_locate_pair *p, size_t n, int skip)
{
    double *v = malloc((n ? n : 1) * sizeof *v), med = NAN, unused;
    size_t m = 0;

    if (!v)
        return NAN;
    for (size_t k = 0; k < n; k++)
        if ((p[k].a == x || p[k].b == x) && p[k].a != skip && p[k].b != skip)
            v[m++] = p[k].value;
    if (m && fb_locate_typical(v, m, &med, &unused) != FB_OK)
        med = NAN;
    free(v);
    return med;
}

bool fb_locate_link_like(const struct fb_locate_pair *p, size_t n, size_t k, double tol_pct)
{
    double ma = fb_locate_node_median(p[k].a, p, n, p[k].b);
    double mb = fb_locate_node_median(p[k].b, p, n, p[k].a);

    if (isnan(ma) && isnan(mb))
        return false;
    return (isnan(ma) || fb_locate_is_suspect(p[k].value, ma, 0.0, tol_pct, true)) &&
           (isnan(mb) || fb_locate_is_suspect(p[k].value, mb, 0.0, tol_pct, true));
}

enum fb_locate_kind fb_locate_decide_node(int slow, int tested)
{
    if (tested <= 0 || slow <= 0)
        return FB_LOCATE_NOISE;
    return slow >= tested ? FB_LOCATE_NODE : FB_LOCATE_LINK;
}

enum fb_locate_kind fb_locate_decide_link(bool alone_slow, bool a_slow, bool b_slow, int *which)
{
    *which = -1;
    if (!alone_slow)
        return FB_LOCATE_NOISE;
    if (a_slow || b_slow) {
        *which = a_slow && b_slow ? 2 : a_slow ? 0 : 1;
        return FB_LOCATE_NODE;
    }
    return FB_LOCATE_LINK;
}

int fb_locate_stragglers(const double *time, int n, double tol_pct, bool *straggler,
                         double *median)
{
    double mad;
    int count = 0;

    if (n <= 0) {
        *median = 0.0;
        return 0;
    }
    if (fb_locate_typical(time, (size_t)n, median, &mad) != FB_OK)
        return -1;
    for (int k = 0; k < n; k++) {
        straggler[k] = fb_locate_is_suspect(time[k], *median, mad, tol_pct, false);
        count += straggler[k];
    }
    return count;
}
