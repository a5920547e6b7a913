/* compare's outputs: the fingerprint difference and the verdict table on the terminal,
 * compare.csv with a row per joined row, and compare.md, the report with the rows grouped by
 * verdict and the plots listed. Every file is written atomically. */
#define _GNU_SOURCE
#include "compare_out.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "compare_impl.h"
#include "csv.h"
#include "log.h"
#include "md_text.h"

static void fmt_opt(char *buf, size_t len, long long v)
{
    if (v < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%lld", v);
}

static const struct fb_row *any_row(const struct fb_cmp_entry *e)
{
    return e->base ? &e->base->row : &e->cur->row;
}

void fb_compare_print_fingerprint(FILE *f, const struct fb_fp_diff *d, size_t n,
                                  const char *bname, const char *nname)
{
    fprintf(f, "| what | ");
    fb_md_put_text(f, bname);
    fprintf(f, " | ");
    fb_md_put_text(f, nname);
    fprintf(f, " |\n|---|---|---|\n");
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "| ");
        fb_md_put_code(f, d[i].path, true);
        fprintf(f, " | ");
        fb_md_put_text(f, d[i].base);
        fprintf(f, " | ");
        fb_md_put_text(f, d[i].cur);
        fprintf(f, " |\n");
    }
}

int fb_compare_write_csv(const char *path, const struct fb_comparison *c, bool machines)
{
    static const char *const head[] = {
        "verdict",      "bench",        "case",      "backend",    "transport",
        "nodes",        "ranks",        "src",       "dst",        "batch",
        "bytes",        "dtype",        "metric",    "unit",       "base_samples",
        "base_median",  "base_p05",     "base_p95",  "new_samples", "new_median",
        "new_p05",      "new_p95",      "ratio",     "change_pct", "rule",
        "base_line",    "new_line",
    };
    struct fb_atomic_file af;
    fb_status st = fb_atomic_open(&af, path);

    if (st != FB_OK)
        return 1;
    fb_csv_row(af.f, head, sizeof head / sizeof head[0]);
    for (size_t i = 0; i < c->n; i++) {
        const struct fb_cmp_entry *e = &c->e[i];
        const struct fb_row *r = any_row(e);
        char v[27][48];
        const char *f[27];
        const struct fb_read_row *sides[2] = {e->base, e->cur};

        for (int k = 0; k < 27; k++) {
            v[k][0] = '\0';
            f[k] = v[k];
        }
        f[0] = fb_compare_verdict_str(e->verdict, machines);
        f[1] = r->bench;
        f[2] = r->kase;
        f[3] = r->backend;
        f[4] = r->transport;
        snprintf(v[5], 48, "%d", r->nodes);
        snprintf(v[6], 48, "%d", r->ranks);
        if (r->src >= 0)
            snprintf(v[7], 48, "%d", r->src);
        if (r->dst >= 0)
            snprintf(v[8], 48, "%d", r->dst);
        if (r->batch >= 0)
            snprintf(v[9], 48, "%ld", r->batch);
        if (r->bytes >= 0)
            snprintf(v[10], 48, "%lld", r->bytes);
        f[11] = r->dtype;
        f[12] = r->metric;
        f[13] = r->unit;
        for (int s = 0; s < 2; s++) {
            if (!sides[s])
                continue;
            snprintf(v[14 + 4 * s], 48, "%zu", sides[s]->row.st.samples);
            snprintf(v[15 + 4 * s], 48, "%.10g", sides[s]->row.st.median);
            snprintf(v[16 + 4 * s], 48, "%.10g", sides[s]->row.st.p05);
            snprintf(v[17 + 4 * s], 48, "%.10g", sides[s]->row.st.p95);
            snprintf(v[25 + s], 48, "%zu", sides[s]->line);
        }
        if (!isnan(e->ratio)) {
            snprintf(v[22], 48, "%.10g", e->ratio);
            snprintf(v[23], 48, "%.4g", (e->ratio - 1) * 100);
        }
        if (e->base && e->cur)
            f[24] = e->busy             ? "busy"
                    : e->runs           ? "threshold+runs"
                    : e->threshold_only ? "threshold-only"
                                        : "threshold+bands";
        fb_csv_row(af.f, f, 27);
    }
    if (ferror(af.f)) {
        fb_error("compare: cannot write '%s': %s", af.tmp, strerror(errno));
        fb_atomic_abort(&af);
        return 1;
    }
    return fb_atomic_commit(&af) == FB_OK ? 0 : 1;
}

/* Where both sides have an expected figure (results.csv's `expected`, docs/expected.md): how the
 * change compares with what the two machines' hardware says, "; expected -75.0% (BOUND vs
 * BOUND): as the hardware says" (within 10% of the expected ratio), "worse than the hardware
 * says" or "better than the hardware says". */
static void expected_note(FILE *f, const struct fb_cmp_entry *e)
{
    double want, got;

    if (!e->base || !e->cur || !(e->base->row.expected > 0) || !(e->cur->row.expected > 0) ||
        isnan(e->ratio))
        return;
    want = e->cur->row.expected / e->base->row.expected;
    got = e->ratio;
    fprintf(f, "; expected %+.1f%% (", (want - 1) * 100);
    fb_md_put_text(f, e->base->row.bound); /* a results.csv's text: escaped */
    fprintf(f, " vs ");
    fb_md_put_text(f, e->cur->row.bound);
    fprintf(f, "): %s", fabs(got / want - 1) <= 0.10 ? "as the hardware says"
                        : got < want                ? "worse than the hardware says"
                                                    : "better than the hardware says");
}

static void md_rows(FILE *f, const struct fb_comparison *c, enum fb_cmp_verdict v, bool machines,
                    const char *title)
{
    char ratio[32];

    if (!c->count[v])
        return;
    fprintf(f, "\n### %s (%zu)\n\n", title, c->count[v]);
    fprintf(f, "| bench | case | transport | ranks | src | dst | bytes | batch | dtype | metric "
               "| %s | %s | ratio | change |\n"
               "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
            machines ? "first" : "base", machines ? "second" : "new");
    for (size_t i = 0; i < c->n; i++) {
        const struct fb_cmp_entry *e = &c->e[i];
        const struct fb_row *r = any_row(e);
        char src[16], dst[16], bytes[24], batch[24], bm[48], nm[48], ch[32];
        if (e->verdict != v)
            continue;
        fmt_opt(src, sizeof src, r->src);
        fmt_opt(dst, sizeof dst, r->dst);
        fmt_opt(bytes, sizeof bytes, r->bytes);
        fmt_opt(batch, sizeof batch, r->batch);
        if (e->base)
            snprintf(bm, sizeof bm, "%.4g [%.4g, %.4g]", e->base->row.st.median,
                     e->base->row.st.p05, e->base->row.st.p95);
        else
            snprintf(bm, sizeof bm, "-");
        if (e->cur)
            snprintf(nm, sizeof nm, "%.4g [%.4g, %.4g]", e->cur->row.st.median,
                     e->cur->row.st.p05, e->cur->row.st.p95);
        else
            snprintf(nm, sizeof nm, "-");
        snprintf(ratio, sizeof ratio, isnan(e->ratio) ? "-" : "%.3f", e->ratio);
        snprintf(ch, sizeof ch, isnan(e->ratio) ? "-" : "%+.1f%%%s", (e->ratio - 1) * 100,
                 e->threshold_only && !e->runs ? " (1 sample)" : "");
        /* every text cell comes from a results.csv: escaped (md_text.h) */
        const char *text[] = {r->bench, r->kase, r->transport};
        for (size_t k = 0; k < 3; k++) {
            fprintf(f, "| ");
            fb_md_put_text(f, text[k]);
            fprintf(f, " ");
        }
        fprintf(f, "| %d | %s | %s | %s | %s | ", r->ranks, src, dst, bytes, batch);
        fb_md_put_text(f, r->dtype[0] ? r->dtype : "-");
        fprintf(f, " | ");
        fb_md_put_text(f, r->metric);
        fprintf(f, " ");
        fb_md_put_text(f, r->unit);
        fprintf(f, " | %s | %s | %s | %s", bm, nm, ratio, ch);
        expected_note(f, e);
        fprintf(f, " |\n");
    }
}

bool fb_compare_by_runs(const struct fb_comparison *c)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].runs)
            return true;
    return false;
}

/* a side's runs: each results.csv, as a list */
static void md_runs(FILE *f, const char *what, const struct fb_cmp_set *s)
{
    fprintf(f, "- %s: ", what);
    fb_md_put_text(f, s->label);
    for (size_t i = 0; i < s->n; i++) {
        fprintf(f, "%s", s->n > 1 ? "\n  - " : ", ");
        fb_md_put_code(f, s->run[i].csv, false);
        fprintf(f, " (run ");
        fb_md_put_text(f, s->run[i].id);
        fprintf(f, ")");
    }
    fprintf(f, "\n");
}

/* the runs' spread per benchmark and the runs a change of the threshold needs */
static void md_spread(FILE *f, const struct fb_comparison *c, double threshold)
{
    struct fb_cmp_spread sp[64];
    size_t n = fb_compare_spread(c, threshold, sp, sizeof sp / sizeof sp[0]);
    char need[24], need90[24];

    fprintf(f, "\n## Run-to-run spread\n\n");
    if (!n) {
        fprintf(f, "Unknown: no row has two runs or more on a side.\n");
        return;
    }
    fprintf(f, "The relative standard deviation of the runs' medians, over each benchmark's rows "
               "(median and 90th percentile), and the runs per side that see a change of "
               "%.4g%% at the 1%% level with 80%% power.\n\n"
               "| bench | rows | spread (median) | runs per side | spread (90th pct) | runs "
               "per side |\n|---|---|---|---|---|---|\n",
               threshold * 100);
    for (size_t i = 0; i < n; i++) {
        snprintf(need, sizeof need, sp[i].runs_needed < 0 ? "more than %d" : "%d",
                 sp[i].runs_needed < 0 ? FB_COMPARE_RUNS_MAX : sp[i].runs_needed);
        snprintf(need90, sizeof need90, sp[i].runs_needed_p90 < 0 ? "more than %d" : "%d",
                 sp[i].runs_needed_p90 < 0 ? FB_COMPARE_RUNS_MAX : sp[i].runs_needed_p90);
        fprintf(f, "| ");
        fb_md_put_text(f, sp[i].bench);
        fprintf(f, " | %zu | %.2f%% | %s | %.2f%% | %s |\n", sp[i].rows, sp[i].cv * 100, need,
                sp[i].cv_p90 * 100, need90);
    }
}

int fb_compare_write_md(const char *path, const char *out, const struct fb_cmp_set *b,
                        const struct fb_cmp_set *n, const struct fb_comparison *c,
                        double threshold, bool machines, const struct fb_fp_diff *d, size_t nd,
                        const char *fp_note)
{
    struct fb_atomic_file af;
    bool no_gnuplot = false, runs = fb_compare_by_runs(c);
    int rc;

    if (fb_atomic_open(&af, path) != FB_OK)
        return 1;
    /* labels, run ids and paths come from the runs' files and the command line: escaped */
    fprintf(af.f, machines ? "# " : "# Regression report: ");
    fb_md_put_text(af.f, b->label);
    fprintf(af.f, machines ? " vs " : " (base) vs ");
    fb_md_put_text(af.f, n->label);
    fprintf(af.f, machines ? ": which is better where\n\n" : " (new)\n\n");
    md_runs(af.f, machines ? "first" : "base", b);
    md_runs(af.f, machines ? "second" : "new", n);
    fprintf(af.f, "- threshold: %.4g%%\n", threshold * 100);
    if (runs)
        fprintf(af.f, "- rule: several runs on a side: a change counts when |new/base - 1| > "
                      "threshold (the medians of the runs' medians) **and** Welch's t of the "
                      "runs' medians passes the two-sided 1%% level; one run on a side borrows "
                      "the other side's spread (see docs/compare.md)\n");
    else
        fprintf(af.f, "- rule: a change counts when |new/base - 1| > threshold **and** the two "
                      "runs' [p05, p95] trial bands do not overlap; rows with one sample on "
                      "either side: threshold only. One run on each side: the noise between "
                      "runs is not known; give each side several runs to know it (see "
                      "docs/compare.md)\n");
    fprintf(af.f, "- busy machine: a change is not judged (noise, rule `busy`) where the two "
                  "sides' ranks waited for a CPU to different degrees, more than %.0f points of "
                  "the point's time apart (results.csv's cpu_wait; or above it where one side's "
                  "is unknown): %zu here; the most, %.0f%% in %s and %.0f%% in %s\n",
            100.0 * FB_CPU_WAIT_BUSY, c->busy, 100.0 * c->busiest[0],
            machines ? "the first" : "base", 100.0 * c->busiest[1],
            machines ? "the second" : "new");
    if (runs)
        md_spread(af.f, c, threshold);
    fprintf(af.f, "\n## Fingerprint differences\n\n");
    if (b->n > 1 || n->n > 1)
        fprintf(af.f, "Between the first run of each side.\n\n");
    if (fp_note) {
        fb_md_put_text(af.f, fp_note);
        fprintf(af.f, "\n");
    }
    else if (!nd)
        fprintf(af.f, "None: the two env.json files agree.\n");
    else
        fb_compare_print_fingerprint(af.f, d, nd, b->run[0].id, n->run[0].id);
    fprintf(af.f, "\n## Summary\n\n| verdict | rows |\n|---|---|\n");
    for (int v = 0; v <= FB_CMP_ONLY_NEW; v++)
        if (c->count[v])
            fprintf(af.f, "| %s | %zu |\n", fb_compare_verdict_str(v, machines), c->count[v]);
    md_rows(af.f, c, FB_CMP_REGRESSION, machines,
            machines ? "Worse on the second" : "Regressions");
    md_rows(af.f, c, FB_CMP_IMPROVED, machines, machines ? "Better on the second" : "Improved");
    md_rows(af.f, c, FB_CMP_NOISE, machines,
            "Beyond the threshold but within the runs' noise (not flagged)");
    md_rows(af.f, c, FB_CMP_CHANGED, machines,
            "Changed, metric without a better way (not flagged)");
    md_rows(af.f, c, FB_CMP_NA, machines, "No ratio (zero or non-finite median)");
    md_rows(af.f, c, FB_CMP_ONLY_BASE, machines,
            machines ? "Only on the first" : "Only in base (not flagged)");
    md_rows(af.f, c, FB_CMP_ONLY_NEW, machines,
            machines ? "Only on the second" : "Only in new (not flagged)");
    md_rows(af.f, c, FB_CMP_SAME, machines, "Within the threshold");
    fprintf(af.f, "\n## Plots\n");
    rc = fb_compare_write_plots(out, c, machines, b->label, n->label, af.f, &no_gnuplot);
    if (rc || ferror(af.f)) {
        fb_error("compare: cannot write '%s'", af.tmp);
        fb_atomic_abort(&af);
        return 1;
    }
    return fb_atomic_commit(&af) == FB_OK ? 0 : 1;
}
