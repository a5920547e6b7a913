/* The join, the noise rule and the fingerprint difference of `fabricbench compare`. */
#define _GNU_SOURCE
#include "compare.h"
#include "compare_impl.h"
#include "json_file.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

enum fb_cmp_dir fb_compare_direction(const char *metric)
{
    static const char *const higher[] = {
        "bandwidth", "bandwidth_total", "busbw", "algbw", "images_per_s", "tflops",
        "batch_max", "batch_estimate", "efficiency", "cpu_vs_decode", "copy_vs_h2d",
        "pipeline_vs_h2d",
    };
    static const char *const lower[] = {
        "time", "latency", "time_iter", "stall_fraction", "overhead_vs_flat", "grad_ready",
        "time_synced_avg", "time_synced_min", "time_synced_max", /* run --timing synced */
    };

    for (size_t i = 0; i < sizeof higher / sizeof higher[0]; i++)
        if (strcmp(metric, higher[i]) == 0)
            return FB_CMP_HIGHER;
    for (size_t i = 0; i < sizeof lower / sizeof lower[0]; i++)
        if (strcmp(metric, lower[i]) == 0)
            return FB_CMP_LOWER;
    return FB_CMP_UNKNOWN;
}

bool fb_compare_is_fraction(const char *metric) { return strcmp(metric, "stall_fraction") == 0; }

/* One-sample metrics computed from other rows' medians (the ratios a summary writes) or from a
 * single timing (grad_ready), as opposed to figures found exactly (memfit's batches). */
static bool is_derived(const char *metric)
{
    static const char *const derived[] = {"efficiency",      "cpu_vs_decode",    "copy_vs_h2d",
                                          "pipeline_vs_h2d", "overhead_vs_flat", "grad_ready"};
    for (size_t i = 0; i < sizeof derived / sizeof derived[0]; i++)
        if (strcmp(metric, derived[i]) == 0)
            return true;
    return false;
}

bool fb_compare_screen(const struct fb_row *base, const struct fb_row *cur, double threshold,
                       double *ratio, enum fb_cmp_verdict *v)
{
    double b = base->st.median, c = cur->st.median;

    *ratio = NAN;
    if (!isfinite(b) || !isfinite(c) || b < 0 || c < 0) {
        *v = FB_CMP_NA;
        return true;
    }
    if (b == 0) {
        /* busbw on one rank is 0 by definition: equal zeros are the same figure. */
        if (c == 0)
            *ratio = 1;
        *v = c == 0 ? FB_CMP_SAME : FB_CMP_NA;
        return true;
    }
    *ratio = c / b;
    if (!isfinite(*ratio) || (*ratio == 0 && c > 0)) {
        /* two finite medians whose ratio no double holds (1e308 against 1e-320, or the
         * other way round, where it comes out 0): no ratio */
        *ratio = NAN;
        *v = FB_CMP_NA;
        return true;
    }
    /* A fraction of time (a stall of 0.02 against 0.03) changes by points, not by ratio: a
     * consumer that waits 1% of its time more is not 50% worse. */
    if (!(fb_compare_is_fraction(base->metric) ? fabs(c - b) > threshold
                                                : fabs(*ratio - 1) > threshold)) {
        *v = FB_CMP_SAME;
        return true;
    }
    if (fb_compare_direction(base->metric) == FB_CMP_UNKNOWN) {
        *v = FB_CMP_CHANGED;
        return true;
    }
    return false;
}

enum fb_cmp_verdict fb_compare_way(const char *metric, double ratio)
{
    bool worse = fb_compare_direction(metric) == FB_CMP_HIGHER ? ratio < 1 : ratio > 1;
    return worse ? FB_CMP_REGRESSION : FB_CMP_IMPROVED;
}

enum fb_cmp_verdict fb_compare_judge(const struct fb_row *base, const struct fb_row *cur,
                                     double threshold, double *ratio, bool *threshold_only)
{
    enum fb_cmp_verdict v;

    *threshold_only = base->st.samples < 2 || cur->st.samples < 2;
    if (fb_compare_screen(base, cur, threshold, ratio, &v))
        return v;
    /* One figure derived from other rows' medians, or one timing, has no spread to judge it by:
     * its inputs are judged on their own rows. */
    if (*threshold_only && is_derived(base->metric))
        return FB_CMP_NOISE;
    if (!*threshold_only) {
        /* Separated only when one run's [p05, p95] band lies wholly on one side of the other's:
         * at least 95% of one run's trials beyond 95% of the other's (docs/compare.md). */
        bool separated = cur->st.p95 < base->st.p05 || cur->st.p05 > base->st.p95;
        if (!separated)
            return FB_CMP_NOISE;
    }
    return fb_compare_way(base->metric, *ratio);
}

bool fb_compare_busy(const struct fb_row *base, const struct fb_row *cur)
{
    if (base->cpu_wait_known && cur->cpu_wait_known)
        return fabs(base->cpu_wait - cur->cpu_wait) > FB_CPU_WAIT_BUSY;
    /* one side unknown (a run from before the column): the other's wait alone */
    return (base->cpu_wait_known && base->cpu_wait > FB_CPU_WAIT_BUSY) ||
           (cur->cpu_wait_known && cur->cpu_wait > FB_CPU_WAIT_BUSY);
}

const char *fb_compare_verdict_str(enum fb_cmp_verdict v, bool machines)
{
    switch (v) {
    case FB_CMP_SAME: return "same";
    case FB_CMP_NOISE: return "noise";
    case FB_CMP_IMPROVED: return machines ? "better" : "improved";
    case FB_CMP_REGRESSION: return machines ? "worse" : "REGRESSION";
    case FB_CMP_CHANGED: return "changed";
    case FB_CMP_NA: return "n/a";
    case FB_CMP_ONLY_BASE: return machines ? "only-first" : "only-base";
    case FB_CMP_ONLY_NEW: return machines ? "only-second" : "only-new";
    }
    return "?";
}

static int cmp_ll(long long a, long long b) { return a < b ? -1 : a > b; }

int fb_compare_key_cmp(const struct fb_row *a, const struct fb_row *b)
{
    int d;

    if ((d = strcmp(a->bench, b->bench)) || (d = strcmp(a->kase, b->kase)) ||
        (d = strcmp(a->backend, b->backend)) || (d = strcmp(a->transport, b->transport)) ||
        (d = cmp_ll(a->ranks, b->ranks)) || (d = cmp_ll(a->nodes, b->nodes)) ||
        (d = cmp_ll(a->src, b->src)) || (d = cmp_ll(a->dst, b->dst)) ||
        (d = cmp_ll(a->bytes, b->bytes)) || (d = cmp_ll(a->batch, b->batch)) ||
        (d = strcmp(a->dtype, b->dtype)) || (d = strcmp(a->metric, b->metric)))
        return d;
    return 0;
}

/* qsort's context: the rows an index array points into. */
static int cmp_index(const void *x, const void *y, void *ctx)
{
    const struct fb_read_row *rows = ctx;
    size_t i = *(const size_t *)x, j = *(const size_t *)y;
    int d = fb_compare_key_cmp(&rows[i].row, &rows[j].row);

    return d ? d : cmp_ll((long long)i, (long long)j); /* stable: duplicates in file order */
}

static fb_status join(const struct fb_read_results *base, const struct fb_read_results *cur,
                     double threshold, bool runs, struct fb_comparison *out)
{
    size_t *order = NULL, *taken = NULL;
    bool *used = NULL;
    fb_status st = FB_ERR_NOMEM;

    memset(out, 0, sizeof *out);
    out->e = calloc(base->nrows + cur->nrows + 1, sizeof *out->e);
    order = malloc((cur->nrows + 1) * sizeof *order);
    used = calloc(cur->nrows + 1, sizeof *used);
    taken = calloc(cur->nrows + 1, sizeof *taken);
    if (!out->e || !order || !used || !taken)
        goto out;
    for (size_t i = 0; i < cur->nrows; i++)
        order[i] = i;
    qsort_r(order, cur->nrows, sizeof *order, cmp_index, cur->rows);
    for (size_t i = 0; i < base->nrows; i++) {
        struct fb_cmp_entry *e = &out->e[out->n++];
        size_t lo = 0, hi = cur->nrows;

        e->base = &base->rows[i];
        e->ratio = NAN;
        /* The first sorted cur row whose key is not below this one's. */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (fb_compare_key_cmp(&cur->rows[order[mid]].row, &e->base->row) < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        /* Rows of one key are taken in order, so the taken ones are a prefix of the key's run:
         * taken[lo] counts them, and a key repeated k times costs O(k), not O(k^2). */
        if (lo + taken[lo] < cur->nrows &&
            fb_compare_key_cmp(&cur->rows[order[lo + taken[lo]]].row, &e->base->row) == 0) {
            size_t at = order[lo + taken[lo]++];
            used[at] = true;
            e->cur = &cur->rows[at];
        }
        e->runs = runs;
        if (e->cur && runs)
            e->verdict = fb_compare_judge_runs(&e->base->row, &e->cur->row, threshold, &e->ratio);
        else if (e->cur)
            e->verdict = fb_compare_judge(&e->base->row, &e->cur->row, threshold, &e->ratio,
                                          &e->threshold_only);
        else
            e->verdict = FB_CMP_ONLY_BASE;
        if (e->cur) {
            const struct fb_row *side[2] = {&e->base->row, &e->cur->row};
            for (int k = 0; k < 2; k++)
                if (side[k]->cpu_wait_known && side[k]->cpu_wait > out->busiest[k])
                    out->busiest[k] = side[k]->cpu_wait;
            if ((e->verdict == FB_CMP_REGRESSION || e->verdict == FB_CMP_IMPROVED) &&
                fb_compare_busy(side[0], side[1])) {
                e->verdict = FB_CMP_NOISE;
                e->busy = true;
                out->busy++;
            }
        }
        out->count[e->verdict]++;
    }
    for (size_t i = 0; i < cur->nrows; i++) {
        if (used[i])
            continue;
        struct fb_cmp_entry *e = &out->e[out->n++];
        e->cur = &cur->rows[i];
        e->runs = runs;
        e->ratio = NAN;
        e->verdict = FB_CMP_ONLY_NEW;
        out->count[e->verdict]++;
    }
    st = FB_OK;
out:
    free(order);
    free(used);
    free(taken);
    if (st != FB_OK)
        fb_compare_release(out);
    return st;
}

fb_status fb_compare_join(const struct fb_read_results *base, const struct fb_read_results *cur,
                          double threshold, struct fb_comparison *out)
{
    return join(base, cur, threshold, false, out);
}

fb_status fb_compare_join_runs(const struct fb_read_results *base,
                               const struct fb_read_results *cur, double threshold,
                               struct fb_comparison *out)
{
    return join(base, cur, threshold, true, out);
}

void fb_compare_release(struct fb_comparison *c)
{
    free(c->e);
    memset(c, 0, sizeof *c);
}

/* ---- fingerprints ---- */

struct flat {
    char (*path)[160];
    char (*value)[256];
    size_t n, cap;
    bool ok;
    size_t *order; /* the entries by path, then by place (flat_index) */
};

static void flat_add(struct flat *f, const char *path, const char *value)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 128;
        void *p = realloc(f->path, cap * sizeof *f->path);
        void *v = p ? realloc(f->value, cap * sizeof *f->value) : NULL;
        if (p)
            f->path = p;
        if (!p || !v) {
            f->ok = false;
            return;
        }
        f->value = v;
        f->cap = cap;
    }
    snprintf(f->path[f->n], sizeof f->path[f->n], "%s", path);
    snprintf(f->value[f->n], sizeof f->value[f->n], "%s", value);
    f->n++;
}

/* Every leaf of the JSON tree as "a.b[2].c" = text. */
static void flatten(struct flat *f, const cJSON *node, const char *path)
{
    char sub[160], num[64];
    int i = 0;

    if (cJSON_IsObject(node) || cJSON_IsArray(node)) {
        const cJSON *child;
        /* An empty container adds nothing: what the other side has there shows as absent. */
        cJSON_ArrayForEach(child, node) {
            if (cJSON_IsArray(node))
                snprintf(sub, sizeof sub, "%s[%d]", path, i++);
            else
                snprintf(sub, sizeof sub, "%s%s%s", path, *path ? "." : "", child->string);
            flatten(f, child, sub);
        }
    } else if (cJSON_IsString(node)) {
        flat_add(f, path, node->valuestring);
    } else if (cJSON_IsNumber(node)) {
        snprintf(num, sizeof num, "%.15g", node->valuedouble);
        flat_add(f, path, num);
    } else if (cJSON_IsBool(node)) {
        flat_add(f, path, cJSON_IsTrue(node) ? "true" : "false");
    } else {
        flat_add(f, path, "null");
    }
}

static fb_status load_flat(const char *path, struct flat *f, char *err, size_t errlen)
{
    cJSON *root = NULL;
    fb_status st;

    if ((st = fb_json_file_read(path, false, &root, err, errlen)) != FB_OK)
        return st;
    f->ok = true;
    flatten(f, root, "");
    if (!f->ok) {
        snprintf(err, errlen, "out of memory reading '%s'", path);
        st = FB_ERR_NOMEM;
    }
    cJSON_Delete(root);
    return st;
}

static const struct flat *flat_sorting; /* qsort's comparator has no argument of its own */

static int by_path(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    int d = strcmp(flat_sorting->path[a], flat_sorting->path[b]);
    return d ? d : (a > b) - (a < b);
}

/* Sorts the entries' order by path, so that a look-up is a binary search: two env.json files
 * of thousands of ranks' leaves each compare in n log n, not n^2. */
static bool flat_index(struct flat *f)
{
    if (!(f->order = malloc((f->n + 1) * sizeof *f->order)))
        return false;
    for (size_t i = 0; i < f->n; i++)
        f->order[i] = i;
    flat_sorting = f;
    qsort(f->order, f->n, sizeof *f->order, by_path);
    flat_sorting = NULL;
    return true;
}

/* The value of the first entry at path (a key given twice: its first), or NULL. */
static const char *flat_get(const struct flat *f, const char *path)
{
    size_t lo = 0, hi = f->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(f->path[f->order[mid]], path) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < f->n && strcmp(f->path[f->order[lo]], path) == 0 ? f->value[f->order[lo]] : NULL;
}

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* The group a path belongs to: what most often explains a change comes first. */
static int path_rank(const char *p)
{
    if (!strncmp(p, "cuda.", 5) || !strncmp(p, "nccl.", 5) || !strncmp(p, "mpi.", 4))
        return 0;
    if (!strncmp(p, "gpus", 4) || strstr(p, ".gpu.") || ends_with(p, ".gpu") ||
        strstr(p, "visible_gpus"))
        return 1;
    if (strstr(p, ".cpus") || strstr(p, ".bound") || strstr(p, ".cpu_numa") ||
        strstr(p, ".binding.") || !strcmp(p, "oversubscribed") || !strcmp(p, "nodes") ||
        !strcmp(p, "nranks") || strstr(p, ".node") || strstr(p, ".local_rank"))
        return 2;
    if (!strncmp(p, "environment.", 12))
        return 3;
    if (!strncmp(p, "host.", 5) || strstr(p, ".host") || !strncmp(p, "fabricbench.", 12) ||
        !strncmp(p, "backend.", 8) || !strncmp(p, "collectives.", 12) ||
        !strncmp(p, "hwloc.", 6) || !strncmp(p, "infiniband", 10))
        return 4;
    return 5;
}

static int cmp_diff(const void *x, const void *y)
{
    const struct fb_fp_diff *a = x, *b = y;
    return a->rank != b->rank ? a->rank - b->rank : strcmp(a->path, b->path);
}

fb_status fb_compare_fingerprints(const char *base_json, const char *cur_json,
                                  struct fb_fp_diff **diffs, size_t *ndiffs, char *err,
                                  size_t errlen)
{
    struct flat b = {0}, c = {0};
    struct fb_fp_diff *d = NULL;
    size_t n = 0;
    fb_status st;

    *diffs = NULL;
    *ndiffs = 0;
    if ((st = load_flat(base_json, &b, err, errlen)) != FB_OK ||
        (st = load_flat(cur_json, &c, err, errlen)) != FB_OK)
        goto out;
    d = calloc(b.n + c.n + 1, sizeof *d);
    if (!d || !flat_index(&b) || !flat_index(&c)) {
        st = FB_ERR_NOMEM;
        snprintf(err, errlen, "out of memory comparing fingerprints");
        goto out;
    }
    for (size_t i = 0; i < b.n; i++) {
        const char *other = flat_get(&c, b.path[i]);
        if (other && strcmp(other, b.value[i]) == 0)
            continue;
        snprintf(d[n].path, sizeof d[n].path, "%s", b.path[i]);
        snprintf(d[n].base, sizeof d[n].base, "%s", b.value[i]);
        snprintf(d[n].cur, sizeof d[n].cur, "%s", other ? other : "(absent)");
        d[n].rank = path_rank(b.path[i]);
        n++;
    }
    for (size_t i = 0; i < c.n; i++) {
        if (flat_get(&b, c.path[i]))
            continue;
        snprintf(d[n].path, sizeof d[n].path, "%s", c.path[i]);
        snprintf(d[n].base, sizeof d[n].base, "(absent)");
        snprintf(d[n].cur, sizeof d[n].cur, "%s", c.value[i]);
        d[n].rank = path_rank(c.path[i]);
        n++;
    }
    qsort(d, n, sizeof *d, cmp_diff);
    *diffs = d;
    *ndiffs = n;
    d = NULL;
out:
    free(d);
    free(b.path);
    free(b.value);
    free(b.order);
    free(c.path);
    free(c.value);
    free(c.order);
    return st;
}
