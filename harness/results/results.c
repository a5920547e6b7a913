/* The run folder and results.csv. */
#define _GNU_SOURCE
#include "results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "file_read.h"
#include "csv.h"
#include "log.h"
#include "run_folder.h"

const char *const fb_results_columns[] = {
    "run_id", "bench",   "case",   "backend", "transport", "link",  "nodes", "ranks",
    "src",    "dst",     "batch",  "bytes",   "count",     "dtype", "redop", "iters",
    "metric", "unit",    "samples", "median", "p05",       "p95",   "min",   "max",
    "mean",   "stddev",  "wrong",   "expected", "bound", "cpu_wait",
};
const size_t fb_results_ncolumns = sizeof fb_results_columns / sizeof fb_results_columns[0];
const size_t fb_results_model_ncolumns = 29;
const size_t fb_results_legacy_ncolumns = 27;

static fb_status use_dir(struct fb_results *r, const char *dir, bool force)
{
    struct stat sb;
    char why[4400], note[4400];

    if (snprintf(r->dir, sizeof r->dir, "%s", dir) >= (int)sizeof r->dir) {
        fb_error("--out path is too long");
        return FB_ERR_USAGE;
    }
    snprintf(r->csv_path, sizeof r->csv_path, "%s/results.csv", r->dir);
    /* not a link, not a file (run_folder.c) */
    if (fb_run_folder_check(dir, true, why, sizeof why) != FB_OK) {
        fb_error("%s", why);
        return FB_ERR_USAGE;
    }
    if (stat(dir, &sb) != 0 && fb_mkdirs(dir) != 0) {
        fb_error("cannot create results folder '%s': %s", dir, strerror(errno));
        return FB_ERR_USAGE;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        fb_error("cannot write to results folder '%s': %s", dir, strerror(errno));
        return FB_ERR_USAGE;
    }
    /* the lock before anything is judged or written: a run being written is never touched,
     * --force or not */
    if (fb_run_folder_lock(dir, note, sizeof note, why, sizeof why) != FB_OK) {
        fb_error("%s", why);
        return FB_ERR_USAGE;
    }
    r->locked = true;
    if (note[0])
        fb_warn("%s", note);
    /* no earlier run's file in it unless forced */
    if (fb_run_folder_check(dir, force, why, sizeof why) != FB_OK) {
        fb_error("%s", why);
        fb_run_folder_unlock(dir);
        r->locked = false;
        return FB_ERR_USAGE;
    }
    return FB_OK;
}

fb_status fb_results_prepare(struct fb_results *r, const char *out_dir, const char *root,
                             const char *host, bool force)
{
    char dir[4096];

    memset(r, 0, sizeof *r);
    if (out_dir) {
        const char *base;
        size_t len = strlen(out_dir);
        /* The run id is the folder's own name, without trailing slashes. */
        while (len > 1 && out_dir[len - 1] == '/')
            len--;
        base = memrchr(out_dir, '/', len);
        base = base ? base + 1 : out_dir;
        snprintf(r->run_id, sizeof r->run_id, "%.*s", (int)(len - (size_t)(base - out_dir)), base);
        return use_dir(r, out_dir, force);
    }
    if (!fb_results_free_id(root, host, r->run_id, sizeof r->run_id, dir, sizeof dir)) {
        fb_error("cannot find a free run folder under '%s'", root);
        return FB_ERR_USAGE;
    }
    return use_dir(r, dir, false);
}

bool fb_results_free_id(const char *root, const char *host, char *id, size_t idlen, char *dir,
                        size_t dirlen)
{
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    struct stat sb;

    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    for (int n = 1; n < 1000; n++) {
        if (n == 1)
            snprintf(id, idlen, "%s-%.200s", stamp, host);
        else
            snprintf(id, idlen, "%s-%.200s-%d", stamp, host, n);
        if (snprintf(dir, dirlen, "%s/%s", root, id) >= (int)dirlen)
            return false;
        if (stat(dir, &sb) != 0)
            return true;
    }
    return false;
}

fb_status fb_results_reserve(struct fb_results *r, size_t more)
{
    size_t cap = r->cap ? r->cap : 64;
    struct fb_row *rows;

    while (cap - r->nrows < more)
        cap *= 2;
    if (cap == r->cap)
        return FB_OK;
    if (!(rows = realloc(r->rows, cap * sizeof *rows)))
        return FB_ERR_NOMEM;
    r->rows = rows;
    r->cap = cap;
    return FB_OK;
}

int fb_row_series_cmp(const struct fb_row *a, const struct fb_row *b)
{
    int d;

    if ((d = strcmp(a->bench, b->bench)) || (d = strcmp(a->metric, b->metric)) ||
        (d = strcmp(a->kase, b->kase)) || (d = strcmp(a->backend, b->backend)) ||
        (d = strcmp(a->transport, b->transport)) ||
        (d = (a->ranks > b->ranks) - (a->ranks < b->ranks)) ||
        (d = (a->nodes > b->nodes) - (a->nodes < b->nodes)) ||
        (d = (a->src > b->src) - (a->src < b->src)) ||
        (d = (a->dst > b->dst) - (a->dst < b->dst)) ||
        (d = (a->batch > b->batch) - (a->batch < b->batch)))
        return d;
    return strcmp(a->dtype, b->dtype);
}

fb_status fb_results_add(struct fb_results *r, const struct fb_row *row)
{
    fb_status st;

    if (r->nrows == r->cap && (st = fb_results_reserve(r, 1)) != FB_OK)
        return st;
    r->rows[r->nrows] = *row;
    if (r->annotate)
        r->annotate(r->annotate_ctx, &r->rows[r->nrows]);
    r->nrows++;
    return FB_OK;
}

static void fmt_ll(char *buf, size_t len, long long v) { snprintf(buf, len, "%lld", v); }

/* Empty for "does not apply" (-1), so no column mixes a sentinel number with real values. */
static void fmt_opt(char *buf, size_t len, long long v)
{
    if (v < 0)
        buf[0] = '\0';
    else
        fmt_ll(buf, len, v);
}

int fb_results_write_csv(FILE *f, const char *run_id, const struct fb_row *rows, size_t n)
{
    if (fb_csv_row(f, fb_results_columns, fb_results_ncolumns) != 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        const struct fb_row *w = &rows[i];
        char nodes[16], ranks[16], src[16], dst[16], batch[24], bytes[24], count[24], iters[24],
            samples[24], stat[7][32], wrong[24], expected[32], cpu_wait[16];
        const double v[7] = {w->st.median, w->st.p05, w->st.p95, w->st.min,
                             w->st.max,    w->st.mean, w->st.stddev};
        const char *fields[30];

        fmt_ll(nodes, sizeof nodes, w->nodes);
        fmt_ll(ranks, sizeof ranks, w->ranks);
        fmt_opt(src, sizeof src, w->src);
        fmt_opt(dst, sizeof dst, w->dst);
        fmt_opt(batch, sizeof batch, w->batch);
        fmt_opt(bytes, sizeof bytes, w->bytes);
        fmt_opt(count, sizeof count, w->count);
        fmt_ll(iters, sizeof iters, w->iters);
        fmt_ll(samples, sizeof samples, (long long)w->st.samples);
        for (int k = 0; k < 7; k++)
            snprintf(stat[k], sizeof stat[k], "%.10g", v[k]);
        fmt_opt(wrong, sizeof wrong, w->wrong);

        fields[0] = run_id;
        fields[1] = w->bench;
        fields[2] = w->kase;
        fields[3] = w->backend;
        fields[4] = w->transport;
        fields[5] = w->link;
        fields[6] = nodes;
        fields[7] = ranks;
        fields[8] = src;
        fields[9] = dst;
        fields[10] = batch;
        fields[11] = bytes;
        fields[12] = count;
        fields[13] = w->dtype;
        fields[14] = w->redop;
        fields[15] = iters;
        fields[16] = w->metric;
        fields[17] = w->unit;
        fields[18] = samples;
        for (int k = 0; k < 7; k++)
            fields[19 + k] = stat[k];
        fields[26] = wrong;
        if (w->expected > 0 && isfinite(w->expected))
            snprintf(expected, sizeof expected, "%.6g", w->expected);
        else
            expected[0] = '\0';
        fields[27] = expected;
        fields[28] = w->expected > 0 && isfinite(w->expected) ? w->bound : "";
        if (w->cpu_wait_known && isfinite(w->cpu_wait))
            snprintf(cpu_wait, sizeof cpu_wait, "%.3f", w->cpu_wait);
        else
            cpu_wait[0] = '\0';
        fields[29] = cpu_wait;
        if (fb_csv_row(f, fields, 30) != 0)
            return -1;
    }
    return 0;
}

size_t fb_results_cap(void)
{
    const char *test = getenv("FB_TEST_RESULTS_MAX_BYTES");
    unsigned long long v = test && *test ? strtoull(test, NULL, 10) : 0;

    return v > 0 && v < fb_file_cap(FB_FILE_RESULTS_CSV) ? (size_t)v
                                                         : fb_file_cap(FB_FILE_RESULTS_CSV);
}

fb_status fb_results_flush(struct fb_results *r)
{
    struct fb_atomic_file af;
    fb_status st;

    if (r->in_memory)
        return FB_OK;
    if ((st = fb_atomic_open(&af, r->csv_path)) != FB_OK)
        return st;
    if (fb_results_write_csv(af.f, r->run_id, r->rows, r->nrows) != 0) {
        fb_error("cannot write '%s': %s", af.tmp, strerror(errno));
        fb_atomic_abort(&af);
        return FB_ERR_IO;
    }
    /* What a run writes, its own readers accept: a results.csv past their cap (file_read.c) is
     * not written; the last one written, every row of the points before, stays. */
    size_t most = r->max_bytes ? r->max_bytes : fb_results_cap();
    long size = ftell(af.f);
    if (size < 0 || (unsigned long)size > most) {
        fb_error("'%s' would hold %ld bytes (%zu rows), over the %zu bytes fabricbench's readers "
                 "accept: not written (the rows before are kept); plan fewer points (fewer "
                 "sizes, ops or --overlap modes) or split the run",
                 r->csv_path, size, r->nrows, most);
        fb_atomic_abort(&af);
        return FB_ERR_USAGE;
    }
    if ((st = fb_atomic_commit(&af)) == FB_OK)
        r->written = true;
    return st;
}

void fb_results_release(struct fb_results *r)
{
    if (r->locked)
        fb_run_folder_unlock(r->dir);
    r->locked = false;
    free(r->rows);
    r->rows = NULL;
    r->nrows = r->cap = 0;
}

bool fb_expected_judged(double expected, const char *bound)
{
    return expected > 0 && strncmp(bound, "peak ", 5) != 0;
}

bool fb_row_expected_judged(const struct fb_row *w)
{
    return fb_expected_judged(w->expected, w->bound);
}
