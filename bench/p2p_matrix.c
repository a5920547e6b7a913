/* The p2p summary: rank x rank matrices built from the rows the runner wrote, and the pairs
 * that read far from their siblings. A view only: results.csv holds every figure already. */
#include "p2p_matrix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "world.h"
#include "units.h"

const char *const fb_p2p_matrix_kind_name[FB_P2P_KIND_COUNT] = {
    [FB_P2P_MATRIX_UNI] = "matrix_uni",         [FB_P2P_MATRIX_BIDIR] = "matrix_bidir",
    [FB_P2P_MATRIX_LATENCY] = "matrix_latency", [FB_P2P_ALL_PAIRS] = "all_pairs",
    [FB_P2P_SWEEP_UNI] = "sweep_uni",           [FB_P2P_SWEEP_BIDIR] = "sweep_bidir",
};
const char *const fb_p2p_matrix_via_name[FB_P2P_VIA_COUNT] = {
    [FB_P2P_VIA_COLL] = "coll", [FB_P2P_VIA_IPC] = "ipc", [FB_P2P_VIA_STAGED] = "ipc-staged"};

/* One matrix the summary prints: which rows fill it and how to read it. */
struct matrix_view {
    const char *kase, *metric;
    bool symmetric;         /* one row per unordered pair fills both cells */
    bool prefix;            /* kase names the start of the case names */
    bool higher_is_better;
    const char *title;
};

static const struct matrix_view views[] = {
    {"matrix_uni", "bandwidth", false, false, true, "one pair at a time, one way; GB/s"},
    {"matrix_bidir", "bandwidth_total", true, false, true, "one pair at a time, both ways; GB/s total"},
    {"all_pairs+", "bandwidth", false, true, true,
     "every rank sending (and receiving) at once; GB/s each sender to its receiver"},
    {"matrix_latency", "latency", true, false, false, "one pair at a time; one-way latency in us"},
};

/* A measured cell of a matrix: the pair src -> dst and its median. */
struct cell {
    int src, dst;
    double v;
};

struct cells {
    struct cell *v;
    size_t n, cap;
};

static bool cells_push(struct cells *c, int src, int dst, double v)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        struct cell *grown = realloc(c->v, cap * sizeof *grown);
        if (!grown)
            return false;
        c->v = grown;
        c->cap = cap;
    }
    c->v[c->n++] = (struct cell){src, dst, v};
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The worst cells first (lowest when higher is better), ties by position, like a scan of the
 * matrix row by row. */
static bool worst_first_hib;
static int cmp_worst(const void *a, const void *b)
{
    const struct cell *x = a, *y = b;
    if (x->v != y->v)
        return worst_first_hib ? (x->v > y->v) - (x->v < y->v) : (x->v < y->v) - (x->v > y->v);
    if (x->src != y->src)
        return (x->src > y->src) - (x->src < y->src);
    return (x->dst > y->dst) - (x->dst < y->dst);
}

/* Outliers over a list of measured cells (the diagonal and NaN left out): the up to `max` worst
 * into out[] as src * n + dst, the median into *median; returns how many cells count. */
static size_t cells_outliers(const struct cells *c, int n, bool higher_is_better, int *out,
                             size_t max, size_t *nout, double *median)
{
    struct cell *w = malloc((c->n ? c->n : 1) * sizeof *w);
    double *v = malloc((c->n ? c->n : 1) * sizeof *v);
    size_t count = 0, k;

    *nout = 0;
    *median = NAN;
    if (!w || !v)
        goto out;
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].src != c->v[i].dst && !isnan(c->v[i].v)) {
            w[count] = c->v[i];
            v[count++] = c->v[i].v;
        }
    if (count == 0)
        goto out;
    qsort(v, count, sizeof *v, cmp_double);
    *median = count % 2 ? v[count / 2] : (v[count / 2 - 1] + v[count / 2]) / 2;
    worst_first_hib = higher_is_better;
    qsort(w, count, sizeof *w, cmp_worst);
    for (k = 0; k < max && k < count; k++)
        out[k] = w[k].src * n + w[k].dst;
    *nout = k;
out:
    free(w);
    free(v);
    return count;
}

size_t fb_p2p_matrix_outliers(const double *m, int n, bool higher_is_better, int *out,
                              size_t max, size_t *nout, double *median)
{
    struct cells c = {0};
    size_t count = 0;

    *nout = 0;
    *median = NAN;
    for (int i = 0; i < n * n; i++)
        if (!isnan(m[i]) && !cells_push(&c, i / n, i % n, m[i]))
            goto out;
    count = cells_outliers(&c, n, higher_is_better, out, max, nout, median);
out:
    free(c.v);
    return count;
}

/* Whether a row is a cell of one view and transport of an n-rank matrix. */
static bool in_view(const struct fb_row *w, const struct matrix_view *v, const char *transport,
                    int n)
{
    /* all_pairs has one case per shift ("all_pairs+1", ...): they fill one matrix */
    return strcmp(w->bench, "p2p") == 0 &&
           (v->prefix ? strncmp(w->kase, v->kase, strlen(v->kase)) : strcmp(w->kase, v->kase)) == 0 &&
           strcmp(w->transport, transport) == 0 && strcmp(w->metric, v->metric) == 0 &&
           w->src >= 0 && w->dst >= 0 && w->src < n && w->dst < n;
}

/* The pairs of one view short of their own expected figure (the model's, docs/expected.md), not
 * of the median pair: each below FB_EXPECTED_MIN_SHARE of it named with its bound, or one line
 * saying every pair with a figure reached it. Nothing when no pair has one. */
static void print_short(const struct fb_results *res, size_t first, const struct matrix_view *v,
                        const char *transport, int n)
{
    size_t with = 0, shorts = 0;

    if (!v->higher_is_better)
        return;
    for (size_t r = first; r < res->nrows; r++) {
        const struct fb_row *w = &res->rows[r];
        char pair[32];
        if (!in_view(w, v, transport, n) || !(w->expected > 0))
            continue;
        with++;
        if (!(w->st.median < FB_EXPECTED_MIN_SHARE * w->expected))
            continue;
        shorts++;
        snprintf(pair, sizeof pair, "%d%s%d", w->src, v->symmetric ? "<>" : ">", w->dst);
        fb_out("# short of its own link: %-7s %9.3f = %.0f%% of the %.4g GB/s %s allows  <--\n",
               pair, w->st.median, 100 * w->st.median / w->expected, w->expected, w->bound);
    }
    if (with && !shorts)
        fb_out("# every pair with an expected figure (%zu) reached %.0f%% of it or more\n", with,
               100 * FB_EXPECTED_MIN_SHARE);
}

/* The measured cells of one view and transport, from the rows (a symmetric row fills both
 * cells); returns the message size, 0 when none. Later rows of a cell replace earlier ones. */
static size_t fill_cells(struct fb_results *res, size_t first, const struct matrix_view *v,
                         const char *transport, int n, struct cells *c)
{
    size_t bytes = 0;

    c->n = 0;
    for (size_t r = first; r < res->nrows; r++) {
        const struct fb_row *w = &res->rows[r];
        if (!in_view(w, v, transport, n))
            continue;
        if (!cells_push(c, w->src, w->dst, w->st.median) ||
            (v->symmetric && !cells_push(c, w->dst, w->src, w->st.median)))
            return 0;
        bytes = (size_t)w->bytes;
    }
    return bytes;
}

static void print_matrix(const struct fb_ctx *ctx, const struct matrix_view *v,
                         const char *transport, size_t bytes, const struct cells *c, int n)
{
    char size[24], line[64];
    int outl[3];
    size_t nout, measured;
    double median, *m = NULL;

    fb_size_format(bytes, size, sizeof size);
    fb_out("\n# p2p %s over %s, %s: %s (median of trials)\n", v->prefix ? "all_pairs" : v->kase,
           transport, size, v->title);
    if (n <= FB_P2P_PRINT_MAX && (m = malloc((size_t)n * (size_t)n * sizeof *m))) {
        for (int i = 0; i < n * n; i++)
            m[i] = NAN;
        for (size_t k = 0; k < c->n; k++)
            m[c->v[k].src * n + c->v[k].dst] = c->v[k].v;
        fb_out("# row: sender, column: receiver; - not measured\n%6s", "rank");
        for (int j = 0; j < n; j++)
            fb_out(" %9d", j);
        fb_out("\n");
        for (int i = 0; i < n; i++) {
            fb_out("%6d", i);
            for (int j = 0; j < n; j++) {
                if (isnan(m[i * n + j]))
                    fb_out(" %9s", "-");
                else
                    fb_out(" %9.3f", m[i * n + j]);
            }
            fb_out("\n");
        }
        free(m);
    } else {
        fb_out("# %d x %d: not printed above %d ranks; every measured cell is a row of "
               "results.csv\n", n, n, FB_P2P_PRINT_MAX);
    }
    measured = cells_outliers(c, n, v->higher_is_better, outl, v->symmetric ? 1 : 3, &nout, &median);
    if (measured < 2)
        return;
    for (size_t k = 0; k < nout; k++) {
        int src = outl[k] / n, dst = outl[k] % n;
        double value = NAN, ratio;
        for (size_t i = 0; i < c->n && isnan(value); i++)
            if (c->v[i].src == src && c->v[i].dst == dst)
                value = c->v[i].v;
        ratio = value / median;
        bool odd = v->higher_is_better ? ratio < 0.8 : ratio > 1.25;
        snprintf(line, sizeof line, "%d%s%d", src, v->symmetric ? "<>" : ">", dst);
        fb_out("# %s pair: %-7s %9.3f = %.2f x the median pair (%s)%s\n",
               v->higher_is_better ? "slowest" : "highest-latency", line, value, ratio,
               ctx->links ? ctx->links[(size_t)src * (size_t)ctx->ranks + (size_t)dst] : "?",
               odd ? "  <-- far from its siblings" : "");
    }
}

static void print_links(const struct fb_ctx *ctx, int n)
{
    if (!ctx->links || !ctx->rank_names)
        return;
    if (n > FB_P2P_PRINT_MAX) {
        fb_out("\n# p2p: %d ranks; the link of each measured pair is in results.csv's link column\n",
               n);
        return;
    }
    fb_out("\n# p2p ranks and the link of each pair\n");
    for (int i = 0; i < n; i++)
        fb_out("#   rank %d: %s\n", i, ctx->rank_names[i]);
    fb_out("%6s", "rank");
    for (int j = 0; j < n; j++)
        fb_out(" %12d", j);
    fb_out("\n");
    for (int i = 0; i < n; i++) {
        fb_out("%6d", i);
        for (int j = 0; j < n; j++)
            fb_out(" %12s", i == j ? "-" : ctx->links[(size_t)i * (size_t)n + (size_t)j]);
        fb_out("\n");
    }
}

/* Which pairs the one-way matrix of a transport measured, said on the terminal and as two rows
 * of results.csv (case matrix_plan: pairs_measured and pairs_possible), so a reader can tell a
 * sample from a pair that failed. IPC and staged copies reach only the ranks of one node. */
static void state_plan(const struct fb_ctx *ctx, struct fb_results *res, const char *transport,
                       size_t measured, int n)
{
    bool intra = strcmp(transport, fb_p2p_matrix_via_name[FB_P2P_VIA_IPC]) == 0 ||
                 strcmp(transport, fb_p2p_matrix_via_name[FB_P2P_VIA_STAGED]) == 0;
    long long possible = 0;
    struct fb_row row;
    const char *metric[2] = {"pairs_measured", "pairs_possible"};

    for (int a = 0; a < n; a++) {
        long long same = 0;
        if (!intra) {
            possible += n - 1;
            continue;
        }
        for (int b = 0; b < n; b++)
            same += b != a && ctx->node_of[a] == ctx->node_of[b];
        possible += same;
    }
    fb_out("\n# p2p over %s: %zu of %lld one-way pairs measured%s\n", transport, measured, possible,
           (long long)measured < possible
               ? " (a sample: every pair inside each node, a ring across the nodes, random pairs; "
                 "the others are '-' here and have no row in results.csv)"
               : "");
    for (int i = 0; i < 2; i++) {
        double value = i == 0 ? (double)measured : (double)possible;
        memset(&row, 0, sizeof row);
        snprintf(row.bench, sizeof row.bench, "p2p");
        snprintf(row.kase, sizeof row.kase, "matrix_plan");
        snprintf(row.backend, sizeof row.backend, "%s", ctx->be->name);
        snprintf(row.transport, sizeof row.transport, "%.23s", transport);
        row.nodes = fb_world_count_nodes(ctx->node_of, NULL, n);
        row.ranks = n;
        row.src = row.dst = -1;
        row.batch = -1;
        row.bytes = -1;
        row.count = -1;
        row.wrong = -1;
        row.detail = true;
        snprintf(row.metric, sizeof row.metric, "%s", metric[i]);
        snprintf(row.unit, sizeof row.unit, "pairs");
        if (fb_stats_compute(&value, 1, &row.st) == 0)
            (void)fb_results_add(res, &row);
    }
}

void fb_p2p_matrix_summarize(const struct fb_ctx *ctx, struct fb_results *res, size_t first)
{
    int n = ctx->ranks;
    struct cells c = {0};
    char seen[8][24];
    size_t nseen = 0, end = res->nrows;

    print_links(ctx, n);
    /* Transports in the order they were measured. */
    for (size_t r = first; r < end && nseen < 8; r++) {
        bool known = false;
        if (strcmp(res->rows[r].bench, "p2p") != 0)
            continue;
        for (size_t k = 0; k < nseen && !known; k++)
            known = strcmp(seen[k], res->rows[r].transport) == 0;
        if (!known)
            snprintf(seen[nseen++], sizeof seen[0], "%s", res->rows[r].transport);
    }
    for (size_t t = 0; t < nseen; t++) {
        for (size_t v = 0; v < sizeof views / sizeof views[0]; v++) {
            size_t bytes = fill_cells(res, first, &views[v], seen[t], n, &c);
            if (bytes) {
                print_matrix(ctx, &views[v], seen[t], bytes, &c, n);
                print_short(res, first, &views[v], seen[t], n);
            }
            if (v == 0 && bytes)
                state_plan(ctx, res, seen[t], c.n, n);
        }
    }
    free(c.v);
}
