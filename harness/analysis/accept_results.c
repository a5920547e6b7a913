/* accept's checks on results.csv's figures: each floor the profile sets (p2p per link, h2d
 * with every GPU copying at once, allreduce busbw per size and rank count, compute) judged on
 * the worst median of the rows it selects, and the spread between the trials of every row
 * judged. A row with fewer than the profile's min_samples trials is not judged (SKIP). */
#include "accept.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "accept_impl.h"
#include "results_read.h"

/* ---- figures from results.csv ---------------------------------------------------------- */

/* Which rows a figure check judges: "" and -1 match anything. */
struct want {
    const char *bench, *kase, *metric, *link, *dtype;
    long long bytes;
    int ranks;
    bool per_rank; /* src must be set: one rank's (or one pair's) own figure */
};

static bool matches(const struct fb_row *r, const struct want *w)
{
    return strcmp(r->bench, w->bench) == 0 && (!*w->kase || strcmp(r->kase, w->kase) == 0) &&
           strcmp(r->metric, w->metric) == 0 && (!*w->link || strcmp(r->link, w->link) == 0) &&
           (!*w->dtype || strcmp(r->dtype, w->dtype) == 0) &&
           (w->bytes < 0 || r->bytes == w->bytes) &&
           (w->ranks < 0 || r->ranks == w->ranks) && (!w->per_rank || r->src >= 0);
}

static void remember(struct ctx *c, size_t i)
{
    void *m = realloc(c->used, (c->nused + 1) * sizeof *c->used);

    if (!m) {
        c->nomem = true;
        return;
    }
    c->used = m;
    c->used[c->nused++] = i;
}

/* Decimals for a share in percent below a floor, so that it never rounds up to read as the floor
 * itself ("80% ... (below 80%)"): none where that is enough, up to three. */
static int below_decimals(double pct, double floor_pct)
{
    int d = 0;
    for (double scale = 1.0; d < 3 && round(pct * scale) / scale >= floor_pct; d++)
        scale *= 10.0;
    return d;
}

/* Judges every row that `w` selects against a floor `min` (unit `unit`): each row's median
 * must reach it, and the worst one is what the check shows. `what` describes the rows. */
static void floor_check(struct ctx *c, const char *name, const struct want *w, double min,
                        const char *unit, const char *what)
{
    struct fb_accept_check *k = fb_accept_add(c, name);
    const struct fb_read_row *worst = NULL;
    size_t nrows = 0, few = 0, fewest = (size_t)-1;
    size_t first_used = c->nused;

    if (!k)
        return;
    SET(k->expected, ">= %.4g %s", min, unit);
    for (size_t i = 0; i < c->csv.nrows; i++) {
        const struct fb_read_row *r = &c->csv.rows[i];
        if (!matches(&r->row, w))
            continue;
        nrows++;
        if (r->row.st.samples < (size_t)c->p->min_samples) {
            few++;
            if (r->row.st.samples < fewest)
                fewest = r->row.st.samples;
            continue;
        }
        remember(c, i);
        if (!worst || r->row.st.median < worst->row.st.median)
            worst = r;
    }
    if (nrows == 0) {
        SET(k->why, "not measured: results.csv has no %s", what);
        return;
    }
    if (few) {
        c->nused = first_used; /* a check that is not judged adds nothing to the spread */
        SET(k->why, "%zu of %zu rows (%s) have %zu trial(s); the rule needs %d to judge a median",
            few, nrows, what, fewest, c->p->min_samples);
        SET(k->from, "results.csv (%s)", what);
        return;
    }
    SET(k->measured, "%.4g %s", worst->row.st.median, unit);
    if (min > 0)
        k->margin_pct = (worst->row.st.median / min - 1) * 100;
    SET(k->from, "results.csv:%zu (%s, median of %zu trials", worst->line, what,
        worst->row.st.samples);
    fb_accept_set(k->from + strlen(k->from), sizeof k->from - strlen(k->from), nrows > 1 ?
        ", the worst of %zu rows)" : ")", nrows);
    if (worst->row.st.median >= min) {
        k->verdict = FB_PASS;
    } else {
        k->verdict = FB_FAIL;
        SET(k->why, "%.4g %s < %.4g %s", worst->row.st.median, unit, min, unit);
        if (worst->row.src >= 0 && worst->row.dst >= 0)
            fb_accept_set(k->why + strlen(k->why), sizeof k->why - strlen(k->why),
                          " (pair %d -> %d)", worst->row.src, worst->row.dst);
        else if (worst->row.src >= 0)
            fb_accept_set(k->why + strlen(k->why), sizeof k->why - strlen(k->why),
                          " (rank %d)", worst->row.src);
    }
}

void fb_accept_check_p2p(struct ctx *c)
{
    for (size_t i = 0; i < c->p->np2p; i++) {
        const struct fb_profile_p2p *t = &c->p->p2p[i];
        struct want w = {"p2p", "matrix_uni", "bandwidth", t->link, "", -1, -1, true};
        char name[64], what[128];

        snprintf(name, sizeof name, "p2p.%s", t->link);
        snprintf(what, sizeof what, "p2p matrix_uni bandwidth rows with link %s", t->link);
        floor_check(c, name, &w, t->min_gbps, "GB/s", what);
    }
}

void fb_accept_check_h2d(struct ctx *c)
{
    struct want w = {"h2d", "pinned_h2d", "bandwidth", "", "", c->p->h2d_bytes, -1, true};
    char what[160];

    if (c->p->h2d_min_gbps < 0)
        return;
    /* All GPUs copying at once: the point with the most ranks; the largest size unless the
     * profile names one. */
    w.ranks = 0;
    for (size_t i = 0; i < c->csv.nrows; i++) {
        const struct fb_row *r = &c->csv.rows[i].row;
        if (strcmp(r->bench, "h2d") == 0 && strcmp(r->kase, "pinned_h2d") == 0 &&
            strcmp(r->metric, "bandwidth") == 0 && r->ranks > w.ranks)
            w.ranks = r->ranks;
    }
    if (w.bytes < 0) {
        for (size_t i = 0; i < c->csv.nrows; i++) {
            const struct fb_row *r = &c->csv.rows[i].row;
            if (strcmp(r->bench, "h2d") == 0 && strcmp(r->kase, "pinned_h2d") == 0 &&
                r->ranks == w.ranks && r->bytes > w.bytes)
                w.bytes = r->bytes;
        }
    }
    /* only what was set: with no h2d row there is no rank count, and no size unless the
     * profile names one */
    snprintf(what, sizeof what, "h2d pinned_h2d per-rank bandwidth");
    if (w.ranks > 0)
        fb_accept_set(what + strlen(what), sizeof what - strlen(what), ", %d rank(s) at once",
                      w.ranks);
    if (w.bytes >= 0)
        fb_accept_set(what + strlen(what), sizeof what - strlen(what), ", %lld bytes", w.bytes);
    floor_check(c, "h2d_pinned_all", &w, c->p->h2d_min_gbps, "GB/s", what);
}

void fb_accept_check_allreduce(struct ctx *c)
{
    for (size_t i = 0; i < c->p->nbusbw; i++) {
        const struct fb_profile_busbw *t = &c->p->busbw[i];
        struct want w = {"allreduce", c->p->allreduce_case, "busbw", "", c->p->allreduce_dtype,
                         t->bytes, t->ranks, false};
        char name[64], what[160];

        snprintf(name, sizeof name, "allreduce_busbw.%lld.%d", t->bytes, t->ranks);
        snprintf(what, sizeof what, "allreduce %s %s busbw at %lld bytes on %d ranks",
                 c->p->allreduce_case, c->p->allreduce_dtype, t->bytes, t->ranks);
        floor_check(c, name, &w, t->min_gbps, "GB/s", what);
    }
}

void fb_accept_check_compute(struct ctx *c)
{
    struct want w = {"compute", c->p->compute_case, "tflops", "", "", -1, -1, true};
    char what[128];

    if (c->p->compute_min_tflops < 0)
        return;
    snprintf(what, sizeof what, "compute %s tflops rows per GPU", c->p->compute_case);
    floor_check(c, "compute_tflops", &w, c->p->compute_min_tflops, "TFLOP/s", what);
}

/* The spread between trials of every row the figure checks judged: (p95 - p05) / median. */
void fb_accept_check_spread(struct ctx *c)
{
    struct fb_accept_check *k;
    const struct fb_read_row *worst = NULL;
    double worst_pct = -1;

    if (c->p->max_spread_pct < 0 || !(k = fb_accept_add(c, "spread")))
        return;
    SET(k->expected, "<= %.4g %%", c->p->max_spread_pct);
    for (size_t i = 0; i < c->nused; i++) {
        const struct fb_read_row *r = &c->csv.rows[c->used[i]];
        double pct;
        if (!(r->row.st.median > 0))
            continue; /* a busbw of 0 on one rank has no spread to speak of */
        pct = (r->row.st.p95 - r->row.st.p05) / r->row.st.median * 100;
        if (pct > worst_pct) {
            worst_pct = pct;
            worst = r;
        }
    }
    if (!worst) {
        SET(k->why, "no figure was judged, so no spread to judge");
        return;
    }
    SET(k->measured, "%.3g %%", worst_pct);
    k->margin_pct = worst_pct > 0 ? (c->p->max_spread_pct / worst_pct - 1) * 100 : NAN;
    SET(k->from, "results.csv:%zu ((p95 - p05) / median of %s %s, %zu trials; the widest of "
        "%zu judged rows)", worst->line, worst->row.bench, worst->row.kase, worst->row.st.samples,
        c->nused);
    if (worst_pct <= c->p->max_spread_pct) {
        k->verdict = FB_PASS;
    } else {
        k->verdict = FB_FAIL;
        SET(k->why, "trials spread %.3g %% > %.4g %%: the node was not quiet, or varies", worst_pct,
            c->p->max_spread_pct);
    }
}

/* Whether the node was quiet while the run measured: the largest cpu_wait of any timed point
 * (the share of its time a rank waited for a CPU), every row, not only the judged ones: another
 * job on the node shares its CPUs with all of them. */
void fb_accept_check_cpu_wait(struct ctx *c)
{
    struct fb_accept_check *k;
    const struct fb_read_row *worst = NULL;
    size_t known = 0;

    if (c->p->max_cpu_wait_pct < 0 || !(k = fb_accept_add(c, "cpu_wait")))
        return;
    SET(k->expected, "<= %.4g %%", c->p->max_cpu_wait_pct);
    for (size_t i = 0; i < c->csv.nrows; i++) {
        const struct fb_read_row *r = &c->csv.rows[i];
        if (!r->row.cpu_wait_known)
            continue;
        known++;
        if (!worst || r->row.cpu_wait > worst->row.cpu_wait)
            worst = r;
    }
    if (!worst) {
        SET(k->why, "results.csv has no cpu_wait (a run from before the column, or a kernel that "
                    "does not report it)");
        return;
    }
    double pct = worst->row.cpu_wait * 100;
    SET(k->measured, "%.3g %%", pct);
    k->margin_pct = pct > 0 ? (c->p->max_cpu_wait_pct / pct - 1) * 100 : NAN;
    SET(k->from, "results.csv:%zu (a rank of %s %s waited for a CPU that share of the point's "
        "time; the most of %zu timed rows)", worst->line, worst->row.bench, worst->row.kase, known);
    if (pct <= c->p->max_cpu_wait_pct) {
        k->verdict = FB_PASS;
    } else {
        k->verdict = FB_FAIL;
        SET(k->why, "a rank waited for a CPU %.3g %% of a point's time > %.4g %%: other work shared "
            "the node's CPUs, or it ran more busy threads than CPUs; accept it on a quiet node",
            pct, c->p->max_cpu_wait_pct);
    }
}

/* Rows of one series (fb_row_series_cmp) sort together, the most bytes first (qsort over
 * indexes into the rows). */
static const struct fb_read_row *series_rows;

static int by_series_then_bytes(const void *x, const void *y)
{
    const struct fb_row *a = &series_rows[*(const size_t *)x].row;
    const struct fb_row *b = &series_rows[*(const size_t *)y].row;
    int d = fb_row_series_cmp(a, b);

    if (d)
        return d;
    return a->bytes > b->bytes ? -1 : a->bytes < b->bytes; /* the most bytes first */
}

void fb_accept_check_expected(struct ctx *c)
{
    double share = c->p->expected_min_share;
    size_t before = c->out->n;
    struct fb_accept_check *k;

    if (!(share > 0))
        return;
    /* the rows with an expected figure, by series, the largest size of each first: O(n log n)
     * for a fleet's thousands of pairs */
    size_t *idx = malloc((c->csv.nrows + 1) * sizeof *idx), n = 0;

    if (!idx) {
        c->nomem = true;
        return;
    }
    for (size_t i = 0; i < c->csv.nrows; i++)
        if (fb_row_expected_judged(&c->csv.rows[i].row))
            idx[n++] = i;
    series_rows = c->csv.rows;
    qsort(idx, n, sizeof *idx, by_series_then_bytes);
    for (size_t q = 0; q < n; q++) {
        size_t i = idx[q];
        const struct fb_read_row *r = &c->csv.rows[i];
        const struct fb_row *w = &r->row;
        char name[64];
        double floor;

        if (q > 0 && fb_row_series_cmp(&c->csv.rows[idx[q - 1]].row, w) == 0)
            continue; /* not the largest size of its series */
        if (w->src >= 0 && w->dst >= 0)
            snprintf(name, sizeof name, "expected.%.12s.%.16s.%d>%d", w->bench, w->kase, w->src, w->dst);
        else if (w->src >= 0)
            snprintf(name, sizeof name, "expected.%.12s.%.16s.rank%d", w->bench, w->kase, w->src);
        else
            snprintf(name, sizeof name, "expected.%.12s.%.16s.%dranks", w->bench, w->kase, w->ranks);
        if (!(k = fb_accept_add(c, name)))
            break;
        floor = share * w->expected;
        SET(k->expected, ">= %.3g x %.4g %s (%s)", share, w->expected, w->unit,
            w->bound[0] ? w->bound : "the model");
        SET(k->from, "results.csv:%zu (%s %s %s over %s, %lld bytes, median of %zu trials; "
            "expected from the model, docs/expected.md)", r->line, w->bench, w->kase, w->metric,
            w->transport, w->bytes, w->st.samples);
        if (w->st.samples < (size_t)c->p->min_samples) {
            SET(k->why, "%zu trial(s); the rule needs %d to judge a median", w->st.samples,
                c->p->min_samples);
            continue;
        }
        remember(c, i);
        SET(k->measured, "%.4g %s (%.0f%% of expected)", w->st.median, w->unit,
            w->st.median / w->expected * 100);
        k->margin_pct = (w->st.median / floor - 1) * 100;
        if (w->st.median >= floor) {
            k->verdict = FB_PASS;
        } else {
            k->verdict = FB_FAIL;
            double pct = w->st.median / w->expected * 100;
            SET(k->why, "%.4g %s is %.*f%% of the %.4g %s that %s allows (below %.3g%%)",
                w->st.median, w->unit, below_decimals(pct, share * 100), pct, w->expected,
                w->unit, w->bound[0] ? w->bound : "the model", share * 100);
        }
    }
    free(idx);
    /* without a profile these are the checks: say so when there are none */
    if (c->out->n == before && !c->p->path[0] && (k = fb_accept_add(c, "expected")))
        SET(k->why, "no row of results.csv has an expected figure to judge (the model knew no "
            "NIC or PCIe link for what was measured: `fabricbench expect` says why; a GPU's "
            "datasheet peak is shown, not judged)");
}
