/* The headline's choice of rows, shared by `run` (its closing table) and `report` (summary.md),
 * and the detail flags of rows read back from a results.csv. */
#include "headline.h"

#include <stdio.h>
#include <string.h>

#include "units.h"

static bool same_series(const struct fb_row *a, const struct fb_row *b)
{
    return strcmp(a->bench, b->bench) == 0 && strcmp(a->kase, b->kase) == 0 &&
           strcmp(a->transport, b->transport) == 0 && a->ranks == b->ranks && a->src == b->src &&
           a->dst == b->dst && strcmp(a->metric, b->metric) == 0 && strcmp(a->dtype, b->dtype) == 0;
}

bool fb_headline_metric(const char *metric)
{
    static const char *const metrics[] = {"busbw",        "bandwidth", "bandwidth_total",
                                          "images_per_s", "tflops",    "batch_max"};
    for (size_t i = 0; i < sizeof metrics / sizeof metrics[0]; i++)
        if (strcmp(metric, metrics[i]) == 0)
            return true;
    return false;
}

/* A bandwidth row of a point that also counts images: images/s is its headline. */
static bool counts_images(const struct fb_row *rows, size_t n, const struct fb_row *w)
{
    if (strncmp(w->metric, "bandwidth", 9) != 0)
        return false;
    for (size_t j = 0; j < n; j++) {
        const struct fb_row *o = &rows[j];
        if (strcmp(o->metric, "images_per_s") == 0 && strcmp(o->bench, w->bench) == 0 &&
            strcmp(o->kase, w->kase) == 0 && o->ranks == w->ranks && o->src == w->src &&
            o->batch == w->batch)
            return true;
    }
    return false;
}

size_t fb_headline_select(const struct fb_row *rows, size_t n, size_t *idx)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++) {
        const struct fb_row *w = &rows[i];
        bool largest = true;

        if (w->detail || !fb_headline_metric(w->metric) || counts_images(rows, n, w) ||
            strcmp(w->backend, "host-strict") == 0) /* its figures are not measurements */
            continue;
        /* Of a scaling curve, the whole job: the smaller groups are in the run's tables. */
        for (size_t j = 0; j < n && largest; j++)
            if (strcmp(rows[j].bench, w->bench) == 0 && rows[j].src < 0 && w->src < 0 &&
                rows[j].ranks > w->ranks)
                largest = false;
        /* the largest size: bytes, then the batch (a batch sweep at one size), then the first */
        for (size_t j = 0; j < n && largest; j++)
            if (same_series(&rows[j], w) &&
                (rows[j].bytes > w->bytes ||
                 (rows[j].bytes == w->bytes &&
                  (rows[j].batch > w->batch || (rows[j].batch == w->batch && j < i)))))
                largest = false;
        if (largest)
            idx[k++] = i;
    }
    return k;
}

static bool starts_with(const char *s, const char *head) { return strncmp(s, head, strlen(head)) == 0; }

/* The same point (all its keys but the rank) has a row about all its ranks: one with no rank
 * (src empty), or what all ranks moved together (bandwidth_total: a pair's both ways). */
static bool has_all_ranks_row(const struct fb_row *rows, size_t n, const struct fb_row *w)
{
    if (strcmp(w->metric, "bandwidth_total") == 0)
        return false;
    for (size_t j = 0; j < n; j++) {
        const struct fb_row *o = &rows[j];
        if ((o->src < 0 || strcmp(o->metric, "bandwidth_total") == 0) && o->ranks == w->ranks &&
            o->bytes == w->bytes && o->batch == w->batch && strcmp(o->bench, w->bench) == 0 &&
            strcmp(o->kase, w->kase) == 0 && strcmp(o->transport, w->transport) == 0 &&
            strcmp(o->dtype, w->dtype) == 0)
            return true;
    }
    return false;
}

void fb_headline_infer_detail(struct fb_row *rows, size_t n)
{
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
        if (!d && w->src >= 0 && w->ranks > 1)
            d = has_all_ranks_row(rows, n, w);
        w->detail = d;
    }
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
