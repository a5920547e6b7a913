/* compare's terminal screen, read at a glance (compare_out.h): the verdict and counts, the
 * regressions ranked by size, the improvements beyond noise, then the fingerprint differences
 * that can explain a change. Every row and every difference is in compare.md and compare.csv. */
#define _GNU_SOURCE
#include "compare_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "fp_volatile.h"
#include "headline.h"
#include "log.h"

static int by_size(const void *x, const void *y)
{
    const struct fb_cmp_entry *a = *(const struct fb_cmp_entry *const *)x;
    const struct fb_cmp_entry *b = *(const struct fb_cmp_entry *const *)y;
    double da = fabs(log(a->ratio)), db = fabs(log(b->ratio));
    return (da < db) - (da > db);
}

/* One line per row: the change first, then what was measured. */
static void print_rows(const struct fb_comparison *c, enum fb_cmp_verdict v, bool machines,
                       size_t limit)
{
    const struct fb_cmp_entry **e = malloc((c->n + 1) * sizeof *e);
    size_t n = 0;
    if (!e) {
        fb_out("  (out of memory: the rows are in compare.md)\n");
        return;
    }
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].verdict == v && !isnan(c->e[i].ratio) && c->e[i].ratio >= 0)
            e[n++] = &c->e[i];
    qsort(e, n, sizeof *e, by_size);
    fb_out("%s (%zu, largest first):\n", v == FB_CMP_REGRESSION
                                             ? (machines ? "worse" : "regressions")
                                             : (machines ? "better" : "improvements"),
           n);
    for (size_t i = 0; i < n && i < limit; i++) {
        const struct fb_row *r = &e[i]->base->row;
        char size[32], who[32];
        fb_headline_cells(r, size, sizeof size, who, sizeof who);
        char ranks[16];
        snprintf(ranks, sizeof ranks, "%dr", r->ranks);
        fb_out("%-10s %+7.1f%%  %-18s %-16s %-8s %4s %6s %-5s %-16s %10.4g -> %-10.4g %s\n",
               fb_compare_verdict_str(v, machines), (e[i]->ratio - 1) * 100, r->bench, r->kase,
               r->dtype[0] ? r->dtype : "-", ranks, size, who, r->metric, r->st.median,
               e[i]->cur->row.st.median, r->unit);
    }
    if (n > limit)
        fb_out("  ... and %zu more (compare.md)\n", n - limit);
    free(e);
}

/* OMPI_ARGV without the run's own folder (--out DIR, --out=DIR) and --force: the options. */
static void run_options(const char *argv, char *buf, size_t len)
{
    char *copy = strdup(argv ? argv : ""), *save = NULL;
    size_t used = 0;
    bool skip = false;
    buf[0] = '\0';
    if (!copy)
        return;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (skip) {
            skip = false;
            continue;
        }
        if (!strcmp(t, "--out")) {
            skip = true;
            continue;
        }
        if (!strncmp(t, "--out=", 6) || !strcmp(t, "--force"))
            continue;
        int w = snprintf(buf + used, len - used, "%s%s", used ? " " : "", t);
        if (w < 0 || (size_t)w >= len - used)
            break;
        used += (size_t)w;
    }
    free(copy);
}

/* Whether a difference can explain a change in the figures: versions, GPUs, binding and layout,
 * host and build, and the environment a library reads (NCCL_, CUDA_, UCX_, OMPI_MCA_, FB_,
 * NVIDIA_); volatile entries never. */
static bool matters(const struct fb_fp_diff *d)
{
    static const char *const env[] = {"NCCL_", "CUDA_", "UCX_", "OMPI_MCA_", "FB_", "NVIDIA_"};
    if (fb_fp_volatile(d->path))
        return false;
    if (d->rank <= 2 || d->rank == 4)
        return true;
    if (d->rank == 3)
        for (size_t i = 0; i < sizeof env / sizeof *env; i++)
            if (!strncmp(d->path + strlen("environment."), env[i], strlen(env[i])))
                return true;
    return false;
}

void fb_compare_print_glance(const struct fb_comparison *c, bool machines, const char *bid,
                             const char *nid, double threshold, const struct fb_fp_diff *d,
                             size_t nd, const char *fp_note)
{
    size_t reg = c->count[FB_CMP_REGRESSION], shown = 0, other = 0;
    char eb[2048], en[2048]; /* run folders' names, their control bytes shown as \xNN */
    fb_escape_str(bid, 0, eb, sizeof eb);
    fb_escape_str(nid, 0, en, sizeof en);
    fb_out("compare: %s (%s) vs %s (%s): %s\n", eb, machines ? "first" : "base", en,
           machines ? "second" : "new",
           reg ? (machines ? "DIFFERENT (worse rows)" : "REGRESSION") : "no regression");
    fb_out("  %zu rows: %zu %s, %zu %s, %zu noise, %zu same, %zu changed (no better way), %zu "
           "n/a, %zu only in base, %zu only in new; threshold %.4g%% and the runs' own noise\n",
           c->n, reg, fb_compare_verdict_str(FB_CMP_REGRESSION, machines),
           c->count[FB_CMP_IMPROVED], fb_compare_verdict_str(FB_CMP_IMPROVED, machines),
           c->count[FB_CMP_NOISE], c->count[FB_CMP_SAME], c->count[FB_CMP_CHANGED],
           c->count[FB_CMP_NA], c->count[FB_CMP_ONLY_BASE], c->count[FB_CMP_ONLY_NEW],
           threshold * 100);
    if (fb_compare_by_runs(c)) {
        struct fb_cmp_spread sp[32];
        size_t n = fb_compare_spread(c, threshold, sp, sizeof sp / sizeof sp[0]);
        fb_out("run-to-run spread (median over rows) and the runs per side a %.4g%% change "
               "needs:", threshold * 100);
        for (size_t i = 0; i < n; i++) {
            if (sp[i].runs_needed < 0)
                fb_out("%s %s %.1f%% >%d", i ? "," : "", sp[i].bench, sp[i].cv * 100,
                       FB_COMPARE_RUNS_MAX);
            else
                fb_out("%s %s %.1f%% %d", i ? "," : "", sp[i].bench, sp[i].cv * 100,
                       sp[i].runs_needed);
        }
        fb_out("%s\n\n", n ? "" : " unknown (no row has two runs on a side)");
    } else {
        fb_out("one run on each side: the bands are the trials' noise, not the runs'; give each "
               "side several runs to know it (docs/compare.md)\n\n");
    }
    if (c->busy)
        fb_out("busy machine: %zu changes not judged (counted as noise): the two sides' ranks "
               "waited for a CPU to different degrees, more than %.0f points of a point's time "
               "apart (up to %.0f%% in %s, %.0f%% in %s: other work on the same CPUs, or more "
               "busy threads than CPUs); measure both alike, on a quiet node (results.csv's "
               "cpu_wait, docs/compare.md)\n\n",
               c->busy, 100.0 * FB_CPU_WAIT_BUSY, 100.0 * c->busiest[0],
               machines ? "the first" : "base", 100.0 * c->busiest[1],
               machines ? "the second" : "new");
    print_rows(c, FB_CMP_REGRESSION, machines, FB_GLANCE_MAX_REGRESSIONS);
    print_rows(c, FB_CMP_IMPROVED, machines, FB_GLANCE_MAX_IMPROVEMENTS);
    fb_out("\nfingerprint differences that matter:\n");
    if (fp_note)
        fb_out("  %s\n", fp_note);
    for (size_t i = 0; i < nd; i++) {
        if (!strcmp(d[i].path, "environment.OMPI_ARGV")) {
            char a[512], b[512];
            run_options(d[i].base, a, sizeof a);
            run_options(d[i].cur, b, sizeof b);
            if (strcmp(a, b) && shown++ < FB_GLANCE_MAX_FINGERPRINT)
                fb_out("  %-40s %s  ->  %s\n", "run options", a, b);
            continue;
        }
        if (!matters(&d[i])) {
            other += !fb_fp_volatile(d[i].path);
            continue;
        }
        if (shown++ < FB_GLANCE_MAX_FINGERPRINT) {
            char ep[256], e1[512], e2[512];
            fb_out("  %-40s %s  ->  %s\n", fb_escape_str(d[i].path, 0, ep, sizeof ep),
                   fb_escape_str(d[i].base, 0, e1, sizeof e1),
                   fb_escape_str(d[i].cur, 0, e2, sizeof e2));
        }
    }
    if (!fp_note && !shown)
        fb_out("  none\n");
    if (shown > FB_GLANCE_MAX_FINGERPRINT)
        fb_out("  ... and %zu more\n", shown - FB_GLANCE_MAX_FINGERPRINT);
    if (other)
        fb_out("  (%zu other difference(s) in compare.md; volatile entries left out: "
               "docs/compare.md)\n", other);
}
