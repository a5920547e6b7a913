/* compare with several runs on a side (compare.h): the runs pooled row by row, the run-level
 * rule (Welch's t on the runs' medians), and how many runs a change needs. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "compare_impl.h"
#include "stats.h"

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* ---- Student's t quantiles ---- */

/* t quantiles at 0.995 (two-sided 1%) and 0.80 (power 80%) for 1..30 degrees of freedom, then
 * 40, 60, 120 and the normal's (standard tables). */
static const double t995[] = {63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355,
                              3.250,  3.169, 3.106, 3.055, 3.012, 2.977, 2.947, 2.921,
                              2.898,  2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797,
                              2.787,  2.779, 2.771, 2.763, 2.756, 2.750};
static const double t80[] = {1.376, 1.061, 0.978, 0.941, 0.920, 0.906, 0.896, 0.889,
                             0.883, 0.879, 0.876, 0.873, 0.870, 0.868, 0.866, 0.865,
                             0.863, 0.862, 0.861, 0.860, 0.859, 0.858, 0.858, 0.857,
                             0.856, 0.856, 0.855, 0.855, 0.854, 0.854};

static const double t995_tail[4] = {2.704, 2.660, 2.617, 2.576}; /* df 40, 60, 120, inf */
static const double t80_tail[4] = {0.851, 0.848, 0.845, 0.842};

/* The quantile for df degrees of freedom (a fractional df is rounded down, which asks for a
 * little more; under 1, 1); past 30, linear in 1/df between the table's rows, as tables are
 * read. */
static double t_quantile(const double table[30], const double tail[4], double df)
{
    static const double at[] = {30, 40, 60, 120};
    int d = df < 1 || !isfinite(df) ? (df > 1 ? 1000000 : 1) : (int)fmin(floor(df), 1e6);

    if (d <= 30)
        return table[d - 1];
    if (d >= 120)
        return tail[3] + (tail[2] - tail[3]) * (120.0 / d);
    for (int i = 0;; i++)
        if (d <= at[i + 1]) {
            double lo = i ? tail[i - 1] : table[29], x = 1.0 / d;
            double x0 = 1 / at[i], x1 = 1 / at[i + 1];
            return tail[i] + (lo - tail[i]) * (x - x1) / (x0 - x1);
        }
}

double fb_compare_t995(double df) { return t_quantile(t995, t995_tail, df); }

int fb_compare_runs_needed(double cv, double change)
{
    if (!(cv >= 0) || !(change > 0) || !isfinite(cv))
        return -1;
    for (int n = 2; n <= FB_COMPARE_RUNS_MAX; n++) {
        double df = 2.0 * n - 2;
        if ((t_quantile(t995, t995_tail, df) + t_quantile(t80, t80_tail, df)) * cv *
                sqrt(2.0 / n) <=
            change)
            return n;
    }
    return -1;
}

/* ---- pooling ---- */

struct item {
    size_t run, idx; /* which run, which row of it */
    size_t occ;      /* how many rows with this key came before it in its run */
};

/* qsort_r's context: the runs the items point into */
static const struct fb_row *item_row(const struct item *it, const struct fb_read_results *runs)
{
    return &runs[it->run].rows[it->idx].row;
}

static int cmp_size(size_t a, size_t b) { return (a > b) - (a < b); }

/* key, then run, then file order: gives each row its occurrence within its run */
static int by_key_run(const void *x, const void *y, void *ctx)
{
    const struct item *a = x, *b = y;
    int d = fb_compare_key_cmp(item_row(a, ctx), item_row(b, ctx));
    if (d)
        return d;
    return a->run != b->run ? cmp_size(a->run, b->run) : cmp_size(a->idx, b->idx);
}

/* key, then occurrence, then run: one group per pooled row */
static int by_key_occ(const void *x, const void *y, void *ctx)
{
    const struct item *a = x, *b = y;
    int d = fb_compare_key_cmp(item_row(a, ctx), item_row(b, ctx));
    if (d)
        return d;
    return a->occ != b->occ ? cmp_size(a->occ, b->occ) : cmp_size(a->run, b->run);
}

/* the groups' first items, in the order of their run, then their row in it */
static int by_origin(const void *x, const void *y)
{
    const struct item *a = x, *b = y;
    return a->run != b->run ? cmp_size(a->run, b->run) : cmp_size(a->idx, b->idx);
}

/* The resolution of a group's figures: the smallest step between the distinct values its runs
 * wrote (each run's min, p05, median, p95 and max of its trials); 0 when a run has fewer than 2
 * trials (a figure found exactly, memfit's batches) or no two values differ. */
static double group_resolution(const struct item *it, size_t from, size_t to,
                               const struct fb_read_results *runs)
{
    double v[5 * 64], q = 0;
    size_t n = 0;

    for (size_t i = from; i < to && n + 5 <= sizeof v / sizeof v[0]; i++) {
        const struct fb_stats *s = &item_row(&it[i], runs)->st;
        if (s->samples < 2)
            return 0;
        v[n++] = s->min, v[n++] = s->p05, v[n++] = s->median, v[n++] = s->p95, v[n++] = s->max;
    }
    qsort(v, n, sizeof v[0], cmp_double);
    for (size_t i = 1; i < n; i++)
        if (isfinite(v[i]) && isfinite(v[i - 1]) && v[i] > v[i - 1] &&
            (q == 0 || v[i] - v[i - 1] < q))
            q = v[i] - v[i - 1];
    return q;
}

fb_status fb_compare_pool(const struct fb_read_results *runs, size_t k,
                          struct fb_read_results *out)
{
    size_t total = 0, n = 0, groups = 0;
    struct item *it = NULL, *first = NULL;
    size_t *start = NULL;
    double *med = NULL;
    fb_status st = FB_ERR_NOMEM;

    memset(out, 0, sizeof *out);
    for (size_t r = 0; r < k; r++)
        total += runs[r].nrows;
    it = malloc((total + 1) * sizeof *it);
    first = malloc((total + 1) * sizeof *first);
    start = malloc((total + 2) * sizeof *start);
    med = malloc((k + 1) * sizeof *med);
    out->rows = calloc(total + 1, sizeof *out->rows);
    if (!it || !first || !start || !med || !out->rows)
        goto out;
    for (size_t r = 0; r < k; r++)
        for (size_t i = 0; i < runs[r].nrows; i++)
            it[n++] = (struct item){.run = r, .idx = i};
    qsort_r(it, n, sizeof *it, by_key_run, (void *)runs);
    for (size_t i = 0; i < n; i++)
        it[i].occ = i && it[i - 1].run == it[i].run &&
                            fb_compare_key_cmp(item_row(&it[i - 1], runs),
                                               item_row(&it[i], runs)) == 0
                        ? it[i - 1].occ + 1
                        : 0;
    qsort_r(it, n, sizeof *it, by_key_occ, (void *)runs);
    /* groups: a new one where the key or the occurrence changes; first[g] remembers where
     * each group starts (its item's idx field is replaced by the group's start in `it`) */
    for (size_t i = 0; i < n; i++)
        if (i == 0 || it[i].occ != it[i - 1].occ ||
            fb_compare_key_cmp(item_row(&it[i - 1], runs), item_row(&it[i], runs)) != 0) {
            first[groups] = it[i];
            start[groups++] = i;
        }
    start[groups] = n;
    /* a group's row sits where its first run has it: sort the groups by that, keeping their
     * starts (the occ field, no longer needed, carries the group's number) */
    for (size_t g = 0; g < groups; g++)
        first[g].occ = g;
    qsort(first, groups, sizeof *first, by_origin);
    for (size_t o = 0; o < groups; o++) {
        size_t g = first[o].occ, m = 0;
        struct fb_read_row *row = &out->rows[out->nrows++];

        for (size_t i = start[g]; i < start[g + 1]; i++) {
            double v = item_row(&it[i], runs)->st.median;
            if (isfinite(v))
                med[m++] = v;
        }
        *row = runs[first[o].run].rows[first[o].idx];
        /* the busiest of its runs: one busy run makes the pooled row busy */
        row->row.cpu_wait_known = false;
        row->row.cpu_wait = 0.0;
        for (size_t i = start[g]; i < start[g + 1]; i++) {
            const struct fb_row *one = item_row(&it[i], runs);
            if (one->cpu_wait_known) {
                row->row.cpu_wait_known = true;
                if (one->cpu_wait > row->row.cpu_wait)
                    row->row.cpu_wait = one->cpu_wait;
            }
        }
        memset(&row->row.st, 0, sizeof row->row.st);
        row->row.st.median = row->row.st.p05 = row->row.st.p95 = NAN;
        if (m && fb_stats_compute(med, m, &row->row.st) != 0)
            goto out;
        /* A timing read in steps of a clock's tick (0.05 or 0.06 us) can agree to the tick in
         * every run of a side: no spread, yet not an exact figure. The runs' spread is then at
         * least that of rounding to the step, resolution / sqrt(12). */
        if (m >= 2) {
            double floor_sd = group_resolution(it, start[g], start[g + 1], runs) / sqrt(12.0);
            if (row->row.st.stddev < floor_sd)
                row->row.st.stddev = floor_sd;
        }
    }
    snprintf(out->path, sizeof out->path, "%s", k ? runs[0].path : "");
    st = FB_OK;
out:
    free(it);
    free(first);
    free(start);
    free(med);
    if (st != FB_OK)
        fb_results_read_release(out);
    return st;
}

/* ---- the run-level rule ---- */

enum fb_cmp_verdict fb_compare_judge_runs(const struct fb_row *base, const struct fb_row *cur,
                                          double threshold, double *ratio)
{
    size_t nb = base->st.samples, nc = cur->st.samples;
    double vb, vc, se2, df, t;
    enum fb_cmp_verdict v;

    *ratio = NAN;
    if (!nb || !nc)
        return FB_CMP_NA;
    if (fb_compare_screen(base, cur, threshold, ratio, &v))
        return v;
    vb = base->st.stddev * base->st.stddev;
    vc = cur->st.stddev * cur->st.stddev;
    if (nb >= 2 && nc >= 2) {
        /* Welch: each side's own variance */
        se2 = vb / (double)nb + vc / (double)nc;
        df = se2 * se2 / ((vb / nb) * (vb / nb) / (double)(nb - 1) +
                          (vc / nc) * (vc / nc) / (double)(nc - 1));
    } else if (nb >= 2 || nc >= 2) {
        /* one run on one side: the other side's variance stands for both */
        double v = nb >= 2 ? vb : vc;
        se2 = v * (1.0 / (double)nb + 1.0 / (double)nc);
        df = (double)(nb >= 2 ? nb : nc) - 1;
    } else {
        /* one run on each side: no run-to-run spread to judge by */
        return FB_CMP_NOISE;
    }
    if (se2 > 0) {
        t = fabs(cur->st.mean - base->st.mean) / sqrt(se2);
        if (!(t > fb_compare_t995(isfinite(df) ? df : 1)))
            return FB_CMP_NOISE;
    } else if (cur->st.mean == base->st.mean) {
        return FB_CMP_NOISE;
    }
    return fb_compare_way(base->metric, *ratio);
}

/* ---- how many runs a change needs ---- */

size_t fb_compare_spread(const struct fb_comparison *c, double change, struct fb_cmp_spread *out,
                         size_t max)
{
    size_t nout = 0;
    double *cv = malloc((c->n + 1) * sizeof *cv);

    if (!cv)
        return 0;
    for (size_t i = 0; i < c->n && nout < max; i++) {
        const struct fb_cmp_entry *e = &c->e[i];
        bool seen = false;
        size_t m = 0;

        if (!e->runs || !e->base || !e->cur)
            continue;
        for (size_t o = 0; o < nout; o++)
            seen |= strcmp(out[o].bench, e->base->row.bench) == 0;
        if (seen)
            continue;
        /* every row of this benchmark: its relative run-to-run spread, both sides pooled */
        for (size_t j = i; j < c->n; j++) {
            const struct fb_cmp_entry *f = &c->e[j];
            double sum = 0;
            int sides = 0;
            if (!f->runs || !f->base || !f->cur || strcmp(f->base->row.bench, e->base->row.bench) ||
                fb_compare_is_fraction(f->base->row.metric) ||
                fb_compare_direction(f->base->row.metric) == FB_CMP_UNKNOWN)
                continue;
            const struct fb_stats *s[2] = {&f->base->row.st, &f->cur->row.st};
            for (int k = 0; k < 2; k++)
                if (s[k]->samples >= 2 && s[k]->mean > 0) {
                    sum += (s[k]->stddev / s[k]->mean) * (s[k]->stddev / s[k]->mean);
                    sides++;
                }
            if (sides)
                cv[m++] = sqrt(sum / sides);
        }
        if (!m)
            continue;
        qsort(cv, m, sizeof *cv, cmp_double);
        struct fb_cmp_spread *o = &out[nout++];
        snprintf(o->bench, sizeof o->bench, "%s", e->base->row.bench);
        o->rows = m;
        o->cv = fb_stats_quantile_sorted(cv, m, 0.5);
        o->cv_p90 = fb_stats_quantile_sorted(cv, m, 0.9);
        o->runs_needed = fb_compare_runs_needed(o->cv, change);
        o->runs_needed_p90 = fb_compare_runs_needed(o->cv_p90, change);
    }
    free(cv);
    return nout;
}
