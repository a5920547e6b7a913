/* The headline's choice of rows, shared by `run` (its closing table) and `report` (summary.md),
 * and the detail flags of rows read back from a results.csv. Each question about "another row
 * of the same point or series" is a binary search in the rows sorted once by that key, so both
 * are O(n log n): a 4096-rank run has about 550,000 rows. */
#include "headline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "row_index.h"
#include "units.h"

static int cmp_int(long long a, long long b) { return (a > b) - (a < b); }

/* ---- the headline ---- */

/* A series: the rows a headline picks one of (bench, case, transport, ranks, src, dst, metric,
 * dtype). */
static int cmp_series(const struct fb_row *a, const struct fb_row *b)
{
    int c;

    if ((c = strcmp(a->bench, b->bench)) || (c = strcmp(a->kase, b->kase)) ||
        (c = strcmp(a->transport, b->transport)) || (c = cmp_int(a->ranks, b->ranks)) ||
        (c = cmp_int(a->src, b->src)) || (c = cmp_int(a->dst, b->dst)) ||
        (c = strcmp(a->metric, b->metric)))
        return c;
    return strcmp(a->dtype, b->dtype);
}

/* Of a series, the largest size first: bytes, then the batch (a batch sweep at one size). */
static int cmp_series_largest(const struct fb_row *a, const struct fb_row *b)
{
    int c = cmp_series(a, b);

    if (c)
        return c;
    if ((c = cmp_int(b->bytes, a->bytes)))
        return c;
    return cmp_int(b->batch, a->batch);
}

/* The rows of a point that counts images (bench, case, ranks, src, batch). */
static int cmp_point(const struct fb_row *a, const struct fb_row *b)
{
    int c;

    if ((c = strcmp(a->bench, b->bench)) || (c = strcmp(a->kase, b->kase)) ||
        (c = cmp_int(a->ranks, b->ranks)) || (c = cmp_int(a->src, b->src)))
        return c;
    return cmp_int(a->batch, b->batch);
}

static bool is_images(const struct fb_row *r) { return strcmp(r->metric, "images_per_s") == 0; }

/* A benchmark's rows about all ranks, the most ranks first. */
static int cmp_bench_most_ranks(const struct fb_row *a, const struct fb_row *b)
{
    int c = strcmp(a->bench, b->bench);

    return c ? c : cmp_int(b->ranks, a->ranks);
}

static int cmp_bench(const struct fb_row *a, const struct fb_row *b)
{
    return strcmp(a->bench, b->bench);
}

static bool all_ranks(const struct fb_row *r) { return r->src < 0; }

bool fb_headline_metric(const char *metric)
{
    static const char *const metrics[] = {"busbw",        "bandwidth", "bandwidth_total",
                                          "images_per_s", "tflops",    "batch_max"};
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++)
        if (strcmp(metric, metrics[i]) == 0)
            return true;
    return false;
}

fb_status fb_headline_select(const struct fb_row *rows, size_t n, size_t *idx, size_t *count)
{
    struct fb_row_index series = {0}, images = {0}, whole = {0};
    size_t k = 0;
    bool *largest = calloc(n + 1, sizeof *largest);
    fb_status st = FB_ERR_NOMEM;

    *count = 0;
    if (!largest || !fb_row_index_build(&series, rows, n, NULL, cmp_series_largest) ||
        !fb_row_index_build(&images, rows, n, is_images, cmp_point) ||
        !fb_row_index_build(&whole, rows, n, all_ranks, cmp_bench_most_ranks))
        goto out;
    whole.cmp = cmp_bench; /* searched by the bench alone: its first row has the most ranks */
    /* the first of each series in this order is its row at the largest size (the first in the
     * file among equals) */
    for (size_t j = 0; j < series.n; j++)
        largest[series.at[j]] =
            j == 0 || cmp_series(&rows[series.at[j - 1]], &rows[series.at[j]]) != 0;
    for (size_t i = 0; i < n; i++) {
        const struct fb_row *w = &rows[i], *most;

        if (w->detail || !fb_headline_metric(w->metric) || !largest[i] ||
            strcmp(w->backend, "host-strict") == 0) /* its figures are not measurements */
            continue;
        /* a bandwidth row of a point that also counts images: images/s is its headline */
        if (strncmp(w->metric, "bandwidth", 9) == 0 &&
            fb_row_index_first(&images, w))
            continue;
        /* of a scaling curve, the whole job: the smaller groups are in the run's tables */
        if (w->src < 0 && (most = fb_row_index_first(&whole, w)) &&
            most->ranks > w->ranks)
            continue;
        idx[k++] = i;
    }
    *count = k;
    st = FB_OK;
out:
    free(largest);
    fb_row_index_release(&series);
    fb_row_index_release(&images);
    fb_row_index_release(&whole);
    return st;
}

static bool starts_with(const char *s, const char *head) { return strncmp(s, head, strlen(head)) == 0; }

/* A row about all the ranks of its point: one with no rank (src empty), or what all ranks moved
 * together (bandwidth_total: a pair's both ways). */
static bool about_all_ranks(const struct fb_row *r)
{
    return r->src < 0 || strcmp(r->metric, "bandwidth_total") == 0;
}

/* A point, all its keys but the rank: bench, case, transport, dtype, ranks, bytes, batch. */
static int cmp_point_all(const struct fb_row *a, const struct fb_row *b)
{
    int c;

    if ((c = strcmp(a->bench, b->bench)) || (c = strcmp(a->kase, b->kase)) ||
        (c = strcmp(a->transport, b->transport)) || (c = strcmp(a->dtype, b->dtype)) ||
        (c = cmp_int(a->ranks, b->ranks)) || (c = cmp_int(a->bytes, b->bytes)))
        return c;
    return cmp_int(a->batch, b->batch);
}

fb_status fb_headline_infer_detail(struct fb_row *rows, size_t n)
{
    struct fb_row_index all;

    if (!fb_row_index_build(&all, rows, n, about_all_ranks, cmp_point_all))
        return FB_ERR_NOMEM;
    for (size_t i = 0; i < n; i++) {
        struct fb_row *w = &rows[i];
        bool d = false;

        if (strcmp(w->bench, "p2p") == 0)
            d = strcmp(w->kase, "sweep_uni") != 0 && strcmp(w->kase, "sweep_bidir") != 0;
        else if (strcmp(w->bench, "compute") == 0)
            d = strcmp(w->kase, "step_ours") != 0 && strcmp(w->kase, "step_ref") != 0;
        else if (strcmp(w->bench, "densenet_allreduce") == 0)
            d = starts_with(w->kase, "fusion_") || strcmp(w->metric, "overhead_vs_flat") == 0;
        else if (strcmp(w->bench, "pipeline") == 0)
            d = strcmp(w->metric, "cpu_vs_decode") == 0 || strcmp(w->metric, "copy_vs_h2d") == 0 ||
                strcmp(w->metric, "pipeline_vs_h2d") == 0;
        /* a rank's share of a point whose all-ranks row is also there */
        if (!d && w->src >= 0 && w->ranks > 1 && strcmp(w->metric, "bandwidth_total") != 0)
            d = fb_row_index_first(&all, w) != NULL;
        w->detail = d;
    }
    fb_row_index_release(&all);
    return FB_OK;
}

bool fb_headline_in_cache(const struct fb_row *w, unsigned long long llc_bytes)
{
    return llc_bytes > 0 && strcmp(w->backend, "host") == 0 && w->batch <= 0 && w->bytes > 0 &&
           (unsigned long long)w->bytes <= llc_bytes &&
           (starts_with(w->metric, "bandwidth") || strcmp(w->metric, "busbw") == 0);
}

void fb_headline_cache_note(unsigned long long llc_bytes, char *buf, size_t len)
{
    char llc[24];

    fb_size_format((size_t)llc_bytes, llc, sizeof llc);
    snprintf(buf, len,
             "%s: the buffer fits in the %s last-level cache (hwloc): a cache figure, not memory",
             FB_HEADLINE_CACHE_MARK, llc);
}

void fb_headline_cells(const struct fb_row *w, char *size, size_t size_len, char *who,
                       size_t who_len)
{
    if (w->batch > 0)
        snprintf(size, size_len, "b%ld", w->batch);
    else if (w->bytes >= 0)
        fb_size_format((size_t)w->bytes, size, size_len);
    else
        snprintf(size, size_len, "-");
    if (w->src >= 0 && w->dst >= 0)
        snprintf(who, who_len, "%d%s%d", w->src,
                 strcmp(w->metric, "bandwidth_total") == 0 ? "<>" : ">", w->dst);
    else if (w->src >= 0)
        snprintf(who, who_len, "%d", w->src);
    else
        snprintf(who, who_len, "all");
}

void fb_headline_expected(const struct fb_row *w, char *buf, size_t len)
{
    if (!(w->expected > 0) || !(w->st.median >= 0))
        buf[0] = '\0';
    else
        snprintf(buf, len, "%.0f%% of %.4g %s (%s)", w->st.median / w->expected * 100,
                 w->expected, w->unit, w->bound[0] ? w->bound : "the model");
}
