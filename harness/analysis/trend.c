/* Series over runs and their steps (trend.h): binary segmentation under a noise rule. */
#include "trend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Count, mean, median and median half band of the present points in [a, b). */
struct side { size_t n; double mean, median, halfband; };

static void side_of(const struct fb_trend_point *pt, size_t a, size_t b, double *buf,
                         struct side *s)
{
    size_t n = 0;
    for (size_t i = a; i < b; i++)
        if (pt[i].present)
            buf[n++] = pt[i].median;
    s->n = n;
    s->mean = 0;
    if (!n)
        return;
    for (size_t i = 0; i < n; i++)
        s->mean += buf[i] / (double)n;
    qsort(buf, n, sizeof *buf, cmp_double);
    s->median = fb_stats_quantile_sorted(buf, n, 0.5);
    n = 0;
    for (size_t i = a; i < b; i++)
        if (pt[i].present)
            buf[n++] = (pt[i].p95 - pt[i].p05) / 2;
    qsort(buf, n, sizeof *buf, cmp_double);
    s->halfband = fb_stats_quantile_sorted(buf, n, 0.5);
}

/* Present points of [a, b) on the far side of mid, seen from `from` (the other level). */
static size_t beyond(const struct fb_trend_point *pt, size_t a, size_t b, double mid, double from)
{
    size_t n = 0;
    for (size_t i = a; i < b; i++)
        n += pt[i].present && (from < mid ? pt[i].median > mid : pt[i].median < mid);
    return n;
}

/* The rule: the two levels differ beyond the threshold and the noise, and each is held by at
 * least FB_TREND_MIN_SEGMENT runs on its own side of the midpoint (one odd run makes no
 * level). */
static bool passes(const struct fb_trend_point *pt, size_t a, size_t k, size_t b,
                   const struct side *l, const struct side *r, double threshold, double noise)
{
    double diff = fabs(r->median - l->median), mid = (l->median + r->median) / 2;
    return l->n >= FB_TREND_MIN_SEGMENT && r->n >= FB_TREND_MIN_SEGMENT && l->median != 0 &&
           diff > threshold * fabs(l->median) && diff > noise &&
           beyond(pt, a, k, mid, r->median) >= FB_TREND_MIN_SEGMENT &&
           beyond(pt, k, b, mid, l->median) >= FB_TREND_MIN_SEGMENT;
}

struct seg_ctx {
    const struct fb_trend_point *pt;
    enum fb_cmp_dir dir;
    double threshold;
    double sigma; /* the series' run-to-run noise, robust to its steps */
    double *buf;
    struct fb_trend_step *steps;
    size_t n, cap;
};

static fb_status segment(struct seg_ctx *c, size_t a, size_t b)
{
    struct fb_trend_step best = {0};
    double best_score = 0;
    bool found = false;
    for (size_t k = a + 1; k < b; k++) {
        struct side l, r;
        if (!c->pt[k].present)
            continue;
        side_of(c->pt, a, k, c->buf, &l);
        side_of(c->pt, k, b, c->buf, &r);
        if (l.n < FB_TREND_MIN_SEGMENT || r.n < FB_TREND_MIN_SEGMENT)
            continue;
        double band = fmax(l.halfband, r.halfband);
        double noise = fmax(FB_TREND_SPREAD_FACTOR * c->sigma, band);
        if (!passes(c->pt, a, k, b, &l, &r, c->threshold, noise))
            continue;
        /* The split is placed where the means differ most, weighted by the sides' sizes (the
         * classic binary segmentation statistic); the medians judge it. */
        double score = fabs(r.mean - l.mean) * sqrt((double)(l.n * r.n) / (double)(l.n + r.n));
        if (!found || score > best_score) {
            found = true;
            best_score = score;
            best = (struct fb_trend_step){.at = k, .before = l.median, .after = r.median,
                                          .ratio = r.median / l.median, .noise = noise};
        }
    }
    if (!found)
        return FB_OK;
    fb_status st = segment(c, a, best.at);
    if (st != FB_OK)
        return st;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 4;
        struct fb_trend_step *s = realloc(c->steps, cap * sizeof *s);
        if (!s)
            return FB_ERR_NOMEM;
        c->steps = s;
        c->cap = cap;
    }
    c->steps[c->n++] = best;
    return segment(c, best.at, b);
}

/* The run-to-run noise of a series as a standard deviation: 1.4826 * the median absolute
 * difference between successive present runs, / sqrt(2). A step moves one difference only, so
 * a few steps leave it as it was. */
static double series_sigma(const struct fb_trend_point *pt, size_t n, double *buf)
{
    size_t m = 0, prev = n;
    for (size_t i = 0; i < n; i++) {
        if (!pt[i].present)
            continue;
        if (prev < n)
            buf[m++] = fabs(pt[i].median - pt[prev].median);
        prev = i;
    }
    if (!m)
        return 0;
    qsort(buf, m, sizeof *buf, cmp_double);
    return 1.4826 * fb_stats_quantile_sorted(buf, m, 0.5) / sqrt(2.0);
}

/* Each step's levels from the segments between its neighbours; a step whose final levels no
 * longer pass the rule is dropped. */
static void settle(struct seg_ctx *c, size_t n)
{
    size_t kept = 0;
    for (size_t j = 0; j < c->n; j++) {
        struct fb_trend_step *t = &c->steps[j];
        size_t a = kept ? c->steps[kept - 1].at : 0, b = j + 1 < c->n ? c->steps[j + 1].at : n;
        struct side l, r;
        side_of(c->pt, a, t->at, c->buf, &l);
        side_of(c->pt, t->at, b, c->buf, &r);
        double noise = fmax(FB_TREND_SPREAD_FACTOR * c->sigma, fmax(l.halfband, r.halfband));
        if (!passes(c->pt, a, t->at, b, &l, &r, c->threshold, noise))
            continue;
        t->before = l.median;
        t->after = r.median;
        t->ratio = r.median / l.median;
        t->noise = noise;
        t->worse = (c->dir == FB_CMP_HIGHER && r.median < l.median) ||
                   (c->dir == FB_CMP_LOWER && r.median > l.median);
        c->steps[kept++] = *t;
    }
    c->n = kept;
}

fb_status fb_trend_steps(const struct fb_trend_point *pt, size_t n, enum fb_cmp_dir dir,
                         double threshold, struct fb_trend_step **steps, size_t *nsteps)
{
    struct seg_ctx c = {.pt = pt, .dir = dir, .threshold = threshold};
    *steps = NULL;
    *nsteps = 0;
    if (n < 2 * FB_TREND_MIN_SEGMENT)
        return FB_OK;
    if (!(c.buf = malloc(n * sizeof *c.buf)))
        return FB_ERR_NOMEM;
    c.sigma = series_sigma(pt, n, c.buf);
    fb_status st = segment(&c, 0, n);
    if (st == FB_OK)
        settle(&c, n);
    free(c.buf);
    if (st != FB_OK || !c.n) {
        free(c.steps);
        return st;
    }
    *steps = c.steps;
    *nsteps = c.n;
    return FB_OK;
}

/* A row of one run, for grouping the rows of every run by key. */
struct trend_ref {
    const struct fb_row *w;
    size_t r, i;
};

static int ref_by_key(const void *x, const void *y)
{
    const struct trend_ref *a = x, *b = y;
    int d = fb_compare_key_cmp(a->w, b->w);
    if (d)
        return d;
    return a->r != b->r ? (a->r > b->r) - (a->r < b->r) : (a->i > b->i) - (a->i < b->i);
}

/* Groups (first and count in the sorted refs) in the order their key first appears. */
struct trend_group {
    size_t first, count;
};

static const struct trend_ref *sorting_refs; /* qsort's comparator has no argument of its own */

/* Groups by where their first row is: run, then place in it. */
static int group_cmp(const void *x, const void *y)
{
    const struct trend_ref *a = &sorting_refs[((const struct trend_group *)x)->first];
    const struct trend_ref *b = &sorting_refs[((const struct trend_group *)y)->first];
    return a->r != b->r ? (a->r > b->r) - (a->r < b->r) : (a->i > b->i) - (a->i < b->i);
}

fb_status fb_trend_build(const struct fb_row *const *rows, const size_t *nrows, size_t nruns,
                         double threshold, struct fb_trend_series **series, size_t *nseries)
{
    struct fb_trend_series *s = NULL;
    struct trend_ref *refs = NULL;
    struct trend_group *g = NULL;
    size_t n = 0, total = 0, ng = 0;
    fb_status st = FB_OK;

    /* Every row by key (then by run and place), so that finding a row's series is a sort,
     * not a scan of the series so far: tens of thousands of series stay seconds, not
     * minutes. Series come in the order their key first appears, as a scan would give. */
    for (size_t r = 0; r < nruns; r++)
        total += nrows[r];
    if (!(refs = malloc((total + 1) * sizeof *refs)) || !(g = malloc((total + 1) * sizeof *g)))
        goto nomem;
    for (size_t r = 0, t = 0; r < nruns; r++)
        for (size_t i = 0; i < nrows[r]; i++)
            refs[t++] = (struct trend_ref){&rows[r][i], r, i};
    qsort(refs, total, sizeof *refs, ref_by_key);
    for (size_t t = 0; t < total; t++) {
        if (t == 0 || fb_compare_key_cmp(refs[t - 1].w, refs[t].w) != 0)
            g[ng++] = (struct trend_group){t, 0};
        g[ng - 1].count++;
    }
    sorting_refs = refs;
    qsort(g, ng, sizeof *g, group_cmp);
    sorting_refs = NULL;
    if (ng && !(s = calloc(ng, sizeof *s)))
        goto nomem;
    for (size_t k = 0; k < ng; k++, n++) {
        const struct trend_ref *first = &refs[g[k].first];
        s[k].key = *first->w;
        s[k].dir = fb_compare_direction(first->w->metric);
        if (!(s[k].pt = calloc(nruns, sizeof *s[k].pt)))
            goto nomem;
        for (size_t t = g[k].first; t < g[k].first + g[k].count; t++) {
            const struct fb_row *w = refs[t].w;
            if (s[k].pt[refs[t].r].present)
                continue; /* a run's first row of a key stands for it */
            s[k].pt[refs[t].r] = (struct fb_trend_point){true, w->st.median, w->st.p05,
                                                         w->st.p95, w->st.samples};
        }
    }
    free(refs);
    free(g);
    refs = NULL;
    g = NULL;
    for (size_t k = 0; k < n; k++)
        if ((st = fb_trend_steps(s[k].pt, nruns, s[k].dir, threshold, &s[k].steps,
                                 &s[k].nsteps)) != FB_OK)
            goto fail;
    *series = s;
    *nseries = n;
    return FB_OK;
nomem:
    st = FB_ERR_NOMEM;
fail:
    free(refs);
    free(g);
    fb_trend_release(s, n);
    *series = NULL;
    *nseries = 0;
    return st;
}

void fb_trend_release(struct fb_trend_series *s, size_t n)
{
    for (size_t k = 0; s && k < n; k++) {
        free(s[k].pt);
        free(s[k].steps);
    }
    free(s);
}

bool fb_trend_latest_degraded(const struct fb_trend_series *s)
{
    return s->nsteps && s->steps[s->nsteps - 1].worse;
}
