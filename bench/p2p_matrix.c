/* The p2p summary: rank x rank matrices built from the rows the runner wrote, and the pairs
 * that read far from their siblings. A view only: results.csv holds every figure already. */
#include "p2p_matrix.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "units.h"

const char *const p2p_kind_name[P2P_KIND_COUNT] = {
    [P2P_MATRIX_UNI] = "matrix_uni",         [P2P_MATRIX_BIDIR] = "matrix_bidir",
    [P2P_MATRIX_LATENCY] = "matrix_latency", [P2P_ALL_PAIRS] = "all_pairs",
    [P2P_SWEEP_UNI] = "sweep_uni",           [P2P_SWEEP_BIDIR] = "sweep_bidir",
};
const char *const p2p_via_name[P2P_VIA_COUNT] = {
    [P2P_VIA_COLL] = "coll", [P2P_VIA_IPC] = "ipc", [P2P_VIA_STAGED] = "ipc-staged"};

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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

size_t p2p_outliers(const double *m, int n, bool higher_is_better, int *out, size_t max,
                    size_t *nout, double *median)
{
    size_t count = 0, k = 0;
    double *v = malloc((size_t)n * (size_t)n * sizeof *v);
    int *taken = calloc((size_t)n * (size_t)n, sizeof *taken);

    *nout = 0;
    *median = NAN;
    if (!v || !taken)
        goto out;
    for (int i = 0; i < n * n; i++)
        if (i / n != i % n && !isnan(m[i]))
            v[count++] = m[i];
    if (count == 0)
        goto out;
    qsort(v, count, sizeof *v, cmp_double);
    *median = count % 2 ? v[count / 2] : (v[count / 2 - 1] + v[count / 2]) / 2;
    /* Repeatedly take the worst pair not yet named. */
    for (k = 0; k < max && k < count; k++) {
        int worst = -1;
        for (int i = 0; i < n * n; i++) {
            if (i / n == i % n || isnan(m[i]) || taken[i])
                continue;
            if (worst < 0 || (higher_is_better ? m[i] < m[worst] : m[i] > m[worst]))
                worst = i;
        }
        taken[worst] = 1;
        out[k] = worst;
    }
    *nout = k;
out:
    free(v);
    free(taken);
    return count;
}

/* Fills m from the rows of one view and transport; returns the message size, 0 when none. */
static size_t fill_matrix(struct fb_results *res, size_t first, const struct matrix_view *v,
                          const char *transport, int n, double *m)
{
    size_t bytes = 0;

    for (int i = 0; i < n * n; i++)
        m[i] = NAN;
    for (size_t r = first; r < res->nrows; r++) {
        const struct fb_row *w = &res->rows[r];
        /* all_pairs has one case per shift ("all_pairs+1", ...): they fill one matrix */
        if (strcmp(w->bench, "p2p") != 0 ||
            (v->prefix ? strncmp(w->kase, v->kase, strlen(v->kase)) : strcmp(w->kase, v->kase)) != 0 ||
            strcmp(w->transport, transport) != 0 || strcmp(w->metric, v->metric) != 0 ||
            w->src < 0 || w->dst < 0 || w->src >= n || w->dst >= n)
            continue;
        m[w->src * n + w->dst] = w->st.median;
        if (v->symmetric)
            m[w->dst * n + w->src] = w->st.median;
        bytes = (size_t)w->bytes;
    }
    return bytes;
}

static void print_matrix(const struct fb_ctx *ctx, const struct matrix_view *v,
                         const char *transport, size_t bytes, const double *m, int n)
{
    char size[24], line[64];
    int outl[3];
    size_t nout, measured;
    double median;

    fb_size_format(bytes, size, sizeof size);
    fb_out("\n# p2p %s over %s, %s: %s (median of trials)\n", v->prefix ? "all_pairs" : v->kase,
           transport, size, v->title);
    fb_out("# row: sender, column: receiver\n%6s", "rank");
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
    measured = p2p_outliers(m, n, v->higher_is_better, outl, v->symmetric ? 1 : 3, &nout, &median);
    if (measured < 2)
        return;
    for (size_t k = 0; k < nout; k++) {
        int src = outl[k] / n, dst = outl[k] % n;
        double ratio = m[outl[k]] / median;
        bool odd = v->higher_is_better ? ratio < 0.8 : ratio > 1.25;
        snprintf(line, sizeof line, "%d%s%d", src, v->symmetric ? "<>" : ">", dst);
        fb_out("# %s pair: %-7s %9.3f = %.2f x the median pair (%s)%s\n",
               v->higher_is_better ? "slowest" : "highest-latency", line, m[outl[k]], ratio,
               ctx->links ? ctx->links[(size_t)src * (size_t)ctx->ranks + (size_t)dst] : "?",
               odd ? "  <-- far from its siblings" : "");
    }
}

static void print_links(const struct fb_ctx *ctx, int n)
{
    if (!ctx->links || !ctx->rank_names)
        return;
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

void p2p_summarize(const struct fb_ctx *ctx, struct fb_results *res, size_t first)
{
    int n = ctx->ranks;
    double *m = malloc((size_t)n * (size_t)n * sizeof *m);
    char seen[8][24];
    size_t nseen = 0;

    if (!m)
        return;
    print_links(ctx, n);
    /* Transports in the order they were measured. */
    for (size_t r = first; r < res->nrows && nseen < 8; r++) {
        bool known = false;
        if (strcmp(res->rows[r].bench, "p2p") != 0)
            continue;
        for (size_t k = 0; k < nseen && !known; k++)
            known = strcmp(seen[k], res->rows[r].transport) == 0;
        if (!known)
            snprintf(seen[nseen++], sizeof seen[0], "%s", res->rows[r].transport);
    }
    for (size_t t = 0; t < nseen; t++)
        for (size_t v = 0; v < sizeof views / sizeof views[0]; v++) {
            size_t bytes = fill_matrix(res, first, &views[v], seen[t], n, m);
            if (bytes)
                print_matrix(ctx, &views[v], seen[t], bytes, m, n);
        }
    free(m);
}
