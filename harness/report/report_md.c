/* `report`'s summary.md: of one run (environment, the doctor's and NCCL's verdicts, the
 * headline, telemetry, the plots with their state) and of a sweep (a table of its launches, then
 * each launch's doctor, headline and plots). Markdown only: the run was read by report_load.c. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "headline.h"
#include "log.h"
#include "md_text.h"
#include "nccl_verdict.h"
#include "row_index.h"
#include "units.h"

/* Text from the run's files in Markdown: md_text.h escapes it (one line, one cell, no markup). */
static void md(FILE *f, const char *s) { fb_md_put_text(f, s); }

/* The same as an inline code span inside a table. */
static void md_code(FILE *f, const char *s) { fb_md_put_code(f, s, true); }

static const char *jstr(const cJSON *o, const char *path)
{
    char key[64];
    const char *dot;
    const cJSON *v = o;

    /* "a.b": nested keys */
    while (v && (dot = strchr(path, '.'))) {
        snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
        v = cJSON_GetObjectItemCaseSensitive(v, key);
        path = dot + 1;
    }
    v = v ? cJSON_GetObjectItemCaseSensitive(v, path) : NULL;
    if (cJSON_IsString(v))
        return v->valuestring;
    return NULL;
}

static double jnum(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = v ? cJSON_GetObjectItemCaseSensitive(v, b) : NULL;
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* env.json's host.llc_bytes (the last-level cache, hwloc); 0 when absent: runs before it was
 * recorded, or hwloc saw no cache. */
static unsigned long long env_llc_bytes(const cJSON *env)
{
    double llc = jnum(env, "host", "llc_bytes");

    return isfinite(llc) && llc > 0 && llc < 1e18 ? (unsigned long long)llc : 0;
}

static void env_row(FILE *f, const char *what, const char *value)
{
    fprintf(f, "| %s | ", what);
    md(f, value && *value ? value : "unknown");
    fprintf(f, " |\n");
}

static void write_environment(FILE *f, const cJSON *env, const char *h)
{
    char buf[1024];
    const cJSON *gpus = cJSON_GetObjectItemCaseSensitive(env, "gpus");
    const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(env, "ranks"), *x;
    double mem = jnum(env, "host", "memory_bytes");

    fprintf(f, "\n%s Environment\n\nFrom `env.json` (run status: ", h);
    md(f, jstr(env, "run_status") ? jstr(env, "run_status") : "unknown");
    fprintf(f, ").\n\n| | |\n|---|---|\n");
    snprintf(buf, sizeof buf, "%s (%s, %s)", jstr(env, "host.name") ? jstr(env, "host.name") : "?",
             jstr(env, "host.kernel") ? jstr(env, "host.kernel") : "?",
             jstr(env, "host.arch") ? jstr(env, "host.arch") : "?");
    env_row(f, "host", buf);
    snprintf(buf, sizeof buf, "%s; %.0f socket(s), %.0f cores, %.0f hardware threads, %.0f NUMA "
                              "node(s); %.1f GiB of memory",
             jstr(env, "host.cpu_model") ? jstr(env, "host.cpu_model") : "?",
             jnum(env, "host", "sockets"), jnum(env, "host", "cores"), jnum(env, "host", "pus"),
             jnum(env, "host", "numa_nodes"), mem / (1 << 30));
    if (env_llc_bytes(env)) {
        char llc[24];
        size_t used = strlen(buf);
        fb_size_format((size_t)env_llc_bytes(env), llc, sizeof llc);
        snprintf(buf + used, sizeof buf - used, "; %s last-level cache", llc);
    }
    env_row(f, "CPU", buf);
    buf[0] = '\0';
    cJSON_ArrayForEach(x, gpus) {
        size_t used = strlen(buf);
        const cJSON *users = cJSON_GetObjectItemCaseSensitive(x, "ranks");
        snprintf(buf + used, sizeof buf - used, "%s%s %s (%.0f GiB, NUMA %s, ranks %d)",
                 used ? "; " : "", jstr(x, "pci_bus_id") ? jstr(x, "pci_bus_id") : "?",
                 jstr(x, "name") ? jstr(x, "name") : "?", jnum(x, "memory_bytes", NULL) / (1 << 30),
                 jstr(x, "numa") && *jstr(x, "numa") ? jstr(x, "numa") : "?",
                 cJSON_GetArraySize(users));
    }
    env_row(f, "GPUs", buf[0] ? buf : "none");
    env_row(f, "GPU driver (CUDA version it supports)", jstr(env, "cuda.driver_version"));
    env_row(f, "CUDA runtime", jstr(env, "cuda.runtime_version"));
    env_row(f, "NCCL", jstr(env, "nccl.version"));
    snprintf(buf, sizeof buf, "%s (CUDA-aware: %s)", jstr(env, "mpi.library") ? jstr(env, "mpi.library") : "?",
             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
                 cJSON_GetObjectItemCaseSensitive(env, "mpi"), "cuda_aware"))
                 ? "yes"
                 : "no");
    env_row(f, "MPI", buf);
    snprintf(buf, sizeof buf, "%s / %s", jstr(env, "backend.name") ? jstr(env, "backend.name") : "?",
             jstr(env, "collectives.name") ? jstr(env, "collectives.name") : "?");
    env_row(f, "backend / collectives", buf);
    if (jstr(env, "backend.note")) /* host-strict: figures are not measurements */
        env_row(f, "note", jstr(env, "backend.note"));
    snprintf(buf, sizeof buf, "%.0f rank(s) on %.0f node(s)%s", jnum(env, "nranks", NULL),
             jnum(env, "nodes", NULL),
             cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(env, "oversubscribed"))
                 ? ", oversubscribed"
                 : "");
    env_row(f, "job", buf);
    snprintf(buf, sizeof buf, "%s (commit %s)",
             jstr(env, "fabricbench.version") ? jstr(env, "fabricbench.version") : "?",
             jstr(env, "fabricbench.git_commit") ? jstr(env, "fabricbench.git_commit") : "?");
    env_row(f, "fabricbench", buf);
    if (cJSON_GetArraySize(ranks) > 0) {
        fprintf(f, "\nBinding, per rank:\n\n| rank | host | CPUs | CPU NUMA | GPU | GPU NUMA | "
                   "binding |\n|---|---|---|---|---|---|---|\n");
        cJSON_ArrayForEach(x, ranks) {
            const cJSON *g = cJSON_GetObjectItemCaseSensitive(x, "gpu");
            fprintf(f, "| %.0f | ", jnum(x, "rank", NULL));
            md(f, jstr(x, "host"));
            fprintf(f, " | ");
            md(f, jstr(x, "cpus"));
            fprintf(f, "%s | ", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(x, "bound"))
                                    ? ""
                                    : " (unbound)");
            md(f, jstr(x, "cpu_numa"));
            fprintf(f, " | ");
            if (cJSON_IsObject(g)) {
                md(f, jstr(g, "pci_bus_id"));
                fprintf(f, " | ");
                md(f, jstr(g, "numa"));
            } else {
                fprintf(f, "none | -");
            }
            fprintf(f, " | ");
            md(f, jstr(x, "binding.verdict") ? jstr(x, "binding.verdict") : "?");
            fprintf(f, ": ");
            md(f, jstr(x, "binding.why"));
            fprintf(f, " |\n");
        }
    }
}

static void write_doctor(FILE *f, const cJSON *doc, const char *h)
{
    const cJSON *checks = doc ? cJSON_GetObjectItemCaseSensitive(doc, "checks") : NULL, *c;

    fprintf(f, "\n%s Doctor\n\n", h);
    if (!doc) {
        fprintf(f, "Doctor not run: no `doctor.json` in the run folder (`fabricbench doctor "
                   "--json RUN/doctor.json`, under the run's launcher, writes it; `sweep` and "
                   "`harness/scripts/quickstart.sh` do).\n");
        return;
    }
    if (!cJSON_IsArray(checks)) {
        fprintf(f, "`doctor.json` holds no verdicts (written by a fabricbench from before "
                   "`doctor --json` recorded its checks).\n");
        return;
    }
    fprintf(f, "From `doctor.json`: worst verdict **");
    md(f, jstr(doc, "doctor_worst") ? jstr(doc, "doctor_worst") : "?");
    fprintf(f, "**.\n\n| check | verdict | what was seen | fix |\n|---|---|---|---|\n");
    cJSON_ArrayForEach(c, checks) {
        const char *v = jstr(c, "verdict") ? jstr(c, "verdict") : "?";
        fprintf(f, "| ");
        md_code(f, jstr(c, "name"));
        fprintf(f, strcmp(v, "PASS") == 0 ? " | " : " | **");
        md(f, v);
        fprintf(f, strcmp(v, "PASS") == 0 ? " | " : "** | ");
        md(f, jstr(c, "why"));
        fprintf(f, " | ");
        md(f, jstr(c, "fix") && *jstr(c, "fix") ? jstr(c, "fix") : "-");
        fprintf(f, " |\n");
    }
}

static void write_nccl(FILE *f, const struct fb_report_run *r, const char *h)
{
    struct fb_nccl_verdict v[FB_NCCL_VERDICTS];
    char line[512];

    if (!r->have_nccl)
        return;
    fb_nccl_report_summary(&r->nccl, line, sizeof line);
    fb_nccl_verdicts(&r->nccl, v);
    fprintf(f, "\n%s NCCL\n\nFrom the run's `nccl-rank<N>.log`: ", h);
    md(f, line);
    fprintf(f, "\n\n| check | verdict | what was seen |\n|---|---|---|\n");
    for (int i = 0; i < FB_NCCL_VERDICTS; i++) {
        if (v[i].verdict == FB_SKIP)
            continue;
        fprintf(f, "| `%s` | %s | ", v[i].check, fb_verdict_str(v[i].verdict));
        md(f, v[i].text);
        fprintf(f, " |\n");
    }
}

static void write_headline(FILE *f, const struct fb_report_run *r, const char *h)
{
    size_t *idx = malloc((r->nrows + 1) * sizeof *idx);
    size_t n, cached = 0;
    unsigned long long llc = env_llc_bytes(r->env);
    char note[160];
    const char *bench = "";

    if (!idx) {
        fprintf(f, "\n(out of memory: no headline)\n");
        return;
    }
    if (fb_headline_select(r->rows, r->nrows, idx, &n) != FB_OK) {
        fprintf(f, "\n(out of memory: no headline)\n");
        free(idx);
        return;
    }
    fprintf(f, "\n%s Headline\n\nMedian of trials at the largest size of each case, on the most "
               "ranks of each scaling curve (the table `run` ends with); p05 and p95 over the "
               "trials. GB/s = 1e9 B/s; size bN = a batch of N.\n",
            h);
    if (!n && r->nrows && strcmp(r->rows[0].backend, "host-strict") == 0)
        fprintf(f, "\nNo headline: host-strict: figures are not measurements (CUDA's rules "
                   "enforced on a CPU, for tests).\n");
    else if (!n)
        fprintf(f, "\nNo headline figures in this run.\n");
    for (size_t k = 0; k < n; k++) {
        const struct fb_row *w = &r->rows[idx[k]];
        char size[24], who[24], expected[120];

        if (strcmp(w->bench, bench) != 0) {
            bench = w->bench;
            fprintf(f, "\n**");
            md(f, bench);
            fprintf(f, "**\n\n| case | transport | dtype | ranks | rank | size | metric | "
                       "median | unit | p05 | p95 | of expected |\n"
                       "|---|---|---|---:|---:|---:|---|---:|---|---:|---:|---|\n");
        }
        fb_headline_cells(w, size, sizeof size, who, sizeof who);
        fprintf(f, "| ");
        md(f, w->kase);
        fprintf(f, " | ");
        md(f, w->transport);
        fprintf(f, " | ");
        md(f, w->dtype[0] ? w->dtype : "-");
        fprintf(f, " | %d | %s | %s | ", w->ranks, who, size);
        md(f, w->metric);
        fprintf(f, " | %.3f | ", w->st.median);
        md(f, w->unit);
        if (fb_headline_in_cache(w, llc)) {
            fprintf(f, " %s", FB_HEADLINE_CACHE_MARK);
            cached++;
        }
        fprintf(f, " | %.3f | %.3f |", w->st.p05, w->st.p95);
        fb_headline_expected(w, expected, sizeof expected);
        if (expected[0]) {
            fprintf(f, " ");
            md(f, expected);
            fprintf(f, " |");
        } else {
            fprintf(f, " - |");
        }
        fprintf(f, "\n");
    }
    if (cached) {
        fb_headline_cache_note(llc, note, sizeof note);
        fprintf(f, "\n%s.\n", note);
    }
    free(idx);
}

/* Series order for the table of figures short of the hardware: one series together
 * (fb_row_series_cmp), its largest size first. */
static const struct fb_row *short_rows;

static int cmp_series_size(const void *x, const void *y)
{
    const struct fb_row *a = &short_rows[*(const size_t *)x], *b = &short_rows[*(const size_t *)y];
    int c = fb_row_series_cmp(a, b);

    return c ? c : (a->bytes < b->bytes) - (a->bytes > b->bytes); /* largest first */
}

/* Every series with an expected figure judged at its largest size against its own expectation
 * (each pair of the p2p matrix by its own link, not by the median pair): the ones under
 * FB_EXPECTED_MIN_SHARE of it in a table, with the part that bounds them; nothing when no row
 * has an expected figure. */
static void write_short(FILE *f, const struct fb_report_run *r, const char *h)
{
    size_t *idx = malloc((r->nrows ? r->nrows : 1) * sizeof *idx), n = 0, series = 0, below = 0;

    if (!idx) {
        fprintf(f, "\n(out of memory: no comparison with the expected figures)\n");
        return;
    }
    for (size_t i = 0; i < r->nrows; i++)
        if (fb_row_expected_judged(&r->rows[i]) && r->rows[i].st.median >= 0)
            idx[n++] = i;
    if (!n) {
        free(idx);
        return;
    }
    short_rows = r->rows;
    qsort(idx, n, sizeof *idx, cmp_series_size);
    fprintf(f, "\n%s Short of the hardware\n\nEach series with an expected figure "
               "(docs/expected.md), at its largest size, against its own expectation: a p2p pair "
               "by its own link, not by the median pair. Under %.0f%% of it:\n",
            h, 100.0 * FB_EXPECTED_MIN_SHARE);
    for (size_t k = 0; k < n; k++) {
        const struct fb_row *w = &r->rows[idx[k]];
        char size[24], who[24];

        if (k && fb_row_series_cmp(&r->rows[idx[k - 1]], w) == 0)
            continue;
        series++;
        if (!(w->st.median < FB_EXPECTED_MIN_SHARE * w->expected))
            continue;
        if (!below++)
            fprintf(f, "\n| benchmark | case | transport | ranks | rank | size | metric | median "
                       "| expected | share | bound |\n"
                       "|---|---|---|---:|---:|---:|---|---:|---:|---:|---|\n");
        fb_headline_cells(w, size, sizeof size, who, sizeof who);
        fprintf(f, "| ");
        md(f, w->bench);
        fprintf(f, " | ");
        md(f, w->kase);
        fprintf(f, " | ");
        md(f, w->transport);
        fprintf(f, " | %d | %s | %s | ", w->ranks, who, size);
        md(f, w->metric);
        fprintf(f, " | %.4g | %.4g | %.0f%% | ", w->st.median, w->expected,
                100.0 * w->st.median / w->expected);
        md(f, w->bound[0] ? w->bound : "the model");
        fprintf(f, " |\n");
    }
    if (!below)
        fprintf(f, "\nNone: all %zu series reached %.0f%% of their expected figure or more.\n",
                series, 100.0 * FB_EXPECTED_MIN_SHARE);
    else
        fprintf(f, "\n%zu of %zu series under %.0f%% of their expected figure.\n", below, series,
                100.0 * FB_EXPECTED_MIN_SHARE);
    free(idx);
}

/* The telemetry rows of one benchmark and rank: at[start..end) of their index, in file order,
 * the first at rows[first]. */
struct tgroup {
    size_t first, start, end;
};

static int cmp_telemetry(const struct fb_row *a, const struct fb_row *b)
{
    int c = strcmp(a->bench, b->bench);

    return c ? c : (a->src > b->src) - (a->src < b->src);
}

static bool is_telemetry(const struct fb_row *r) { return strcmp(r->kase, "telemetry") == 0; }

static int cmp_tgroup(const void *x, const void *y)
{
    const struct tgroup *a = x, *b = y;
    return (a->first > b->first) - (a->first < b->first);
}

/* The telemetry rows grouped by benchmark and rank (ix, sorted once: O(n log n); a 4096-rank
 * run has 8 rows per benchmark and rank), the groups in the order of their first row. false
 * when out of memory. */
static bool telemetry_groups(const struct fb_row *rows, size_t n, struct fb_row_index *ix,
                             struct tgroup **groups, size_t *ng)
{
    *ng = 0;
    *groups = NULL;
    if (!fb_row_index_build(ix, rows, n, is_telemetry, cmp_telemetry) ||
        !(*groups = malloc((ix->n + 1) * sizeof **groups))) {
        fb_row_index_release(ix);
        return false;
    }
    for (size_t k = 0; k < ix->n; k++) {
        if (k && cmp_telemetry(&rows[ix->at[k - 1]], &rows[ix->at[k]]) == 0)
            continue;
        if (*ng)
            (*groups)[*ng - 1].end = k;
        (*groups)[(*ng)++] = (struct tgroup){ix->at[k], k, ix->n};
    }
    qsort(*groups, *ng, sizeof **groups, cmp_tgroup);
    return true;
}

/* Telemetry rows (case "telemetry"): one line per benchmark and rank, the median of each metric
 * over the samples (the maximum too for power and temperature). */
static void write_telemetry(FILE *f, const struct fb_report_run *r, const char *h)
{
    static const char *const metric[] = {"gpu_util_pct",  "mem_util_pct", "mem_used_bytes",
                                         "power_w",       "sm_clock_mhz", "mem_clock_mhz",
                                         "temp_c",        "throttle_reasons"};
    enum { NM = sizeof metric / sizeof metric[0] };
    bool any = false;
    struct fb_row_index ix;
    struct tgroup *groups = NULL;
    size_t ng = 0;

    for (size_t i = 0; i < r->nrows && !any; i++)
        any = strcmp(r->rows[i].kase, "telemetry") == 0;
    if (!any)
        return;
    fprintf(f, "\n%s Telemetry\n\nGPU samples (NVML) while each benchmark ran, per benchmark and "
               "rank: the median over the samples, the largest in brackets; throttle reasons: "
               "the largest bit mask seen (0x0: never throttled).\n\n"
               "| bench | rank | samples | GPU util (%%) | memory util (%%) | memory used (GiB) | "
               "power (W) | SM clock (MHz) | memory clock (MHz) | temperature (C) | throttle "
               "reasons |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
            h);
    if (!telemetry_groups(r->rows, r->nrows, &ix, &groups, &ng)) {
        fprintf(f, "(out of memory: no telemetry table)\n");
        return;
    }
    for (size_t g = 0; g < ng; g++) {
        const struct fb_row *w = &r->rows[groups[g].first], *v[NM] = {0};
        size_t samples = 0;

        for (size_t k = groups[g].start; k < groups[g].end; k++) {
            const struct fb_row *o = &r->rows[ix.at[k]];
            for (size_t m = 0; m < NM; m++)
                if (!v[m] && strcmp(o->metric, metric[m]) == 0) {
                    v[m] = o;
                    samples = o->st.samples > samples ? o->st.samples : samples;
                }
        }
        fprintf(f, "| ");
        md(f, w->bench);
        fprintf(f, " | ");
        if (w->src >= 0)
            fprintf(f, "%d", w->src);
        else
            fprintf(f, "all");
        fprintf(f, " | %zu", samples);
        for (size_t m = 0; m < NM; m++) {
            if (!v[m])
                fprintf(f, " | -");
            else if (m == 2)
                fprintf(f, " | %.2f (%.2f)", v[m]->st.median / (1 << 30), v[m]->st.max / (1 << 30));
            else if (m == 7)
                fprintf(f, " | 0x%llx", (unsigned long long)v[m]->st.max);
            else
                fprintf(f, " | %.0f (%.0f)", v[m]->st.median, v[m]->st.max);
        }
        fprintf(f, " |\n");
    }
    fb_row_index_release(&ix);
    free(groups);
}

/* A link's destination to one of a plot's files: PREFIXplots/NAME.EXT. */
static void plot_link(FILE *f, const char *prefix, const char *name, const char *ext)
{
    fb_md_put_link(f, prefix);
    fprintf(f, "plots/");
    fb_md_put_link(f, name);
    fprintf(f, ".%s", ext);
}

/* prefix: the run folder relative to the summary ("" or "<variant>/"). */
static void write_plots_md(FILE *f, const struct fb_report_run *r, const char *h,
                           const char *prefix, bool no_plots, bool no_gnuplot)
{
    fprintf(f, "\n%s Plots\n\n", h);
    if (no_plots) {
        fprintf(f, "Not drawn (`--no-plots`).\n");
        return;
    }
    if (!r->plots.n) {
        fprintf(f, "None: this run has none of the rows the plots are made of (docs/report.md).\n");
        return;
    }
    if (no_gnuplot) {
        char where[320];
        snprintf(where, sizeof where, "%splots/", prefix);
        fprintf(f, "Plots skipped: gnuplot was not found on PATH. Each plot's script and data are "
                   "in ");
        fb_md_put_code(f, where, false);
        fprintf(f, ": install gnuplot and run `gnuplot <name>.gp` there (or `fabricbench "
                   "report` again).\n");
    }
    for (size_t i = 0; i < r->plots.n; i++) {
        const struct fb_plot *p = &r->plots.p[i];
        fprintf(f, "\n%s# `%s`\n\n", h, p->name);
        md(f, p->caption);
        fprintf(f, ".\n\n");
        if (r->state[i] == FB_PLOT_DRAWN) {
            fprintf(f, "![%s](", p->name);
            plot_link(f, prefix, p->name, "png");
            fprintf(f, ")\n\n[SVG](");
            plot_link(f, prefix, p->name, "svg");
            fprintf(f, ") · ");
        } else if (r->state[i] == FB_PLOT_FAILED) {
            fprintf(f, "(gnuplot failed on this plot: see the script) ");
        }
        fprintf(f, "[gnuplot script](");
        plot_link(f, prefix, p->name, "gp");
        fprintf(f, ") · [data](");
        plot_link(f, prefix, p->name, "dat");
        fprintf(f, ")\n");
    }
}

static void write_run_md(FILE *f, const struct fb_report_run *r, const char *h, const char *prefix,
                         bool no_plots, bool no_gnuplot)
{
    write_environment(f, r->env, h);
    write_doctor(f, r->doctor, h);
    write_nccl(f, r, h);
    write_headline(f, r, h);
    write_short(f, r, h);
    write_telemetry(f, r, h);
    write_plots_md(f, r, h, prefix, no_plots, no_gnuplot);
}

int fb_report_write_summary(const struct fb_report_run *r, bool no_plots, bool no_gnuplot)
{
    struct fb_atomic_file af;
    char path[4200];

    snprintf(path, sizeof path, "%s/summary.md", r->dir);
    if (fb_atomic_open(&af, path) != FB_OK)
        return 1;
    fprintf(af.f, "# fabricbench run ");
    fb_md_put_code(af.f, r->id, false);
    fprintf(af.f, "\n\n%zu rows in `results.csv` (columns and metrics: results/SCHEMA.md). "
                  "Written by `fabricbench report`.\n",
            r->nrows);
    write_run_md(af.f, r, "##", "", no_plots, no_gnuplot);
    if (ferror(af.f)) {
        fb_error("report: cannot write '%s': %s", af.tmp, strerror(errno));
        fb_atomic_abort(&af);
        return 1;
    }
    return fb_atomic_commit(&af) == FB_OK ? 0 : 1;
}

/* The launch's headline in one cell: each benchmark's first headline figure. */
static void launch_figures(FILE *f, const struct fb_report_run *r)
{
    size_t *idx = malloc((r->nrows + 1) * sizeof *idx);
    size_t n, shown = 0;
    const char *bench = "";

    if (!idx || fb_headline_select(r->rows, r->nrows, idx, &n) != FB_OK) {
        free(idx);
        return;
    }
    for (size_t k = 0; k < n; k++) {
        const struct fb_row *w = &r->rows[idx[k]];
        char size[24], who[24];
        if (strcmp(w->bench, bench) == 0)
            continue;
        bench = w->bench;
        fb_headline_cells(w, size, sizeof size, who, sizeof who);
        fprintf(f, "%s", shown++ ? "<br>" : "");
        md(f, w->bench);
        fprintf(f, " ");
        md(f, w->kase);
        fprintf(f, " ");
        md(f, w->metric);
        fprintf(f, ", %d rank%s, %s: %.3f ", w->ranks, w->ranks == 1 ? "" : "s", size,
                w->st.median);
        md(f, w->unit);
    }
    if (!shown)
        fprintf(f, "-");
    free(idx);
}

int fb_report_write_sweep_summary(const char *top, const struct fb_report_launch *l, size_t n,
                                  bool no_plots, bool no_gnuplot)
{
    struct fb_atomic_file af;
    char path[4200], prefix[300];

    snprintf(path, sizeof path, "%s/summary.md", top);
    if (fb_atomic_open(&af, path) != FB_OK)
        return 1;
    fprintf(af.f, "# fabricbench sweep: %zu launch%s\n\nOne run folder per launch variant "
                  "(`launches.csv`); each has its own `summary.md`. Written by `fabricbench "
                  "report`.\n\n## Launches\n\n| variant | command | exit status | headline "
                  "(first figure of each benchmark) | report |\n|---|---|---|---|---|\n",
            n, n == 1 ? "" : "es");
    for (size_t i = 0; i < n; i++) {
        fprintf(af.f, "| ");
        md_code(af.f, l[i].variant);
        fprintf(af.f, " | ");
        md_code(af.f, l[i].command);
        fprintf(af.f, " | ");
        md(af.f, l[i].exit_status[0] ? l[i].exit_status : "?");
        fprintf(af.f, " | ");
        if (l[i].run.present)
            launch_figures(af.f, &l[i].run);
        else
            fprintf(af.f, "no results");
        fprintf(af.f, " | ");
        if (l[i].run.present) {
            const char *rel = l[i].run.dir + strlen(top) + 1;
            fprintf(af.f, "[summary](");
            fb_md_put_link(af.f, rel);
            fprintf(af.f, "/summary.md)");
        } else {
            fprintf(af.f, "-");
        }
        fprintf(af.f, " |\n");
    }
    for (size_t i = 0; i < n; i++) {
        fprintf(af.f, "\n## Launch ");
        fb_md_put_code(af.f, l[i].variant, false);
        fprintf(af.f, "\n\n");
        fb_md_put_code_block(af.f, l[i].command);
        fprintf(af.f, "\nExit status: ");
        md(af.f, l[i].exit_status[0] ? l[i].exit_status : "unknown");
        fprintf(af.f, ".");
        if (!l[i].run.present) {
            fprintf(af.f, " No `results.csv` in ");
            fb_md_put_code(af.f, l[i].run.dir + strlen(top) + 1, false);
            fprintf(af.f, ": the launch failed before measuring.\n");
            continue;
        }
        snprintf(prefix, sizeof prefix, "%.290s/", l[i].run.dir + strlen(top) + 1);
        fprintf(af.f, " Full report: [");
        md(af.f, prefix);
        fprintf(af.f, "summary.md](");
        fb_md_put_link(af.f, prefix);
        fprintf(af.f, "summary.md).\n");
        write_doctor(af.f, l[i].run.doctor, "###");
        write_headline(af.f, &l[i].run, "###");
        write_plots_md(af.f, &l[i].run, "###", prefix, no_plots, no_gnuplot);
    }
    if (ferror(af.f)) {
        fb_error("report: cannot write '%s': %s", af.tmp, strerror(errno));
        fb_atomic_abort(&af);
        return 1;
    }
    return fb_atomic_commit(&af) == FB_OK ? 0 : 1;
}
