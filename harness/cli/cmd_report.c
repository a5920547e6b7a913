/* `fabricbench report [--no-plots] RUN_DIR`: a run folder (or a sweep's folder of launches)
 * turned into plots (gnuplot: PNG and SVG, each with its .gp script and .dat data in
 * RUN/plots) and RUN/summary.md. No MPI. Every input is read and checked before anything is
 * written; each file is written atomically. The plots' data come from harness/analysis/report_data.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cJSON.h>

#include "atomic_file.h"
#include "cli.h"
#include "csv_table.h"
#include "commands.h"
#include "gnuplot.h"
#include "headline.h"
#include "json_file.h"
#include "log.h"
#include "nccl_report.h"
#include "nccl_verdict.h"
#include "plot_templates.h"
#include "report_data.h"
#include "results_read.h"
#include "run_state.h"

enum plot_state { PLOT_DRAWN, PLOT_SKIPPED, PLOT_FAILED, PLOT_OFF };

/* One run folder, read whole. */
struct run_in {
    char dir[4096];
    char id[128];
    bool present;              /* a sweep's launch that wrote no results: false */
    struct fb_read_results res;
    struct fb_row *rows;       /* the rows with their detail flags inferred */
    size_t nrows;
    cJSON *env, *doctor;       /* doctor: NULL when there is no doctor.json */
    bool have_nccl;
    struct fb_nccl_report nccl;
    struct fb_plot_set plots;
    enum plot_state *state;    /* per plot */
};

/* A sweep's launch, from launches.csv. */
struct launch {
    char variant[128];
    char command[2048];
    char exit_status[32];
    size_t line;
    struct run_in run;
};

static void usage(void)
{
    printf("usage: fabricbench report [--no-plots] RUN_DIR\n"
           "Turns a run folder into plots and a summary: RUN_DIR/summary.md (environment, the\n"
           "doctor's and NCCL's verdicts, the headline figures, telemetry, links to the plots)\n"
           "and RUN_DIR/plots/<name>.png, .svg, .gp (the gnuplot script: `cd plots && gnuplot\n"
           "<name>.gp` redraws both) and .dat (its data). A sweep's folder (with launches.csv)\n"
           "gets a report per launch and a summary of all. gnuplot is found on PATH; without it\n"
           "the scripts and summary.md are still written and the plots are skipped.\n\n"
           "  --no-plots  write summary.md only\n"
           "  --help      this text\n\n"
           "exit: 0 written (plots skipped without gnuplot), 1 an output error, 2 bad input (a\n"
           "missing folder, a malformed results.csv, env.json, doctor.json or launches.csv)\n");
}

/* ---- reading ---- */

/* 0 read (or optional and absent), 1 out of memory, 2 bad input (one line printed). */
static int read_json(const char *path, cJSON **out, bool optional)
{
    char err[600];
    fb_status st = fb_json_file_read(path, optional, out, err, sizeof err);

    if (st != FB_OK)
        fb_error("report: %s", err);
    return st == FB_OK ? 0 : st == FB_ERR_NOMEM ? 1 : 2;
}

/* Reads dir's results.csv, env.json, doctor.json (optional) and NCCL logs (optional), and
 * computes the plots' data. 0, 1 (out of memory) or 2 (bad input, one line printed). */
static int run_load(struct run_in *r, const char *dir)
{
    char path[4200], err[700];
    struct stat sb;
    fb_status st;
    int rc;

    if (snprintf(r->dir, sizeof r->dir, "%s", dir) >= (int)sizeof r->dir) {
        fb_error("report: path too long: '%.60s...'", dir);
        return 2;
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fb_error("report: cannot open run folder '%s': %s", dir,
                 errno && !S_ISDIR(sb.st_mode) ? strerror(errno) : "not a folder");
        return 2;
    }
    snprintf(path, sizeof path, "%s/results.csv", dir);
    st = fb_results_read(path, &r->res, err, sizeof err);
    if (st != FB_OK) {
        fb_error("report: %s", err);
        return st == FB_ERR_NOMEM ? 1 : 2;
    }
    snprintf(path, sizeof path, "%s/env.json", dir);
    if ((rc = read_json(path, &r->env, false)) != 0)
        return rc;
    {
        char why[1200];
        if (r->env && fb_run_state_incomplete(r->env, why, sizeof why))
            fb_warn("report: run folder '%s' is incomplete (%s); the plots and summary.md show "
                    "its finished points only", dir, why);
    }
    snprintf(path, sizeof path, "%s/doctor.json", dir);
    if ((rc = read_json(path, &r->doctor, true)) != 0)
        return rc;
    st = fb_nccl_report_dir(dir, &r->nccl, err, sizeof err);
    if (st == FB_OK)
        r->have_nccl = r->nccl.nccl_lines > 0;
    else if (st != FB_ERR_UNSUPPORTED) {
        fb_error("report: %s", err);
        return st == FB_ERR_NOMEM ? 1 : 2;
    }
    if (r->res.nrows)
        snprintf(r->id, sizeof r->id, "%s", r->res.rows[0].run_id);
    else {
        const char *base = strrchr(dir, '/');
        snprintf(r->id, sizeof r->id, "%s", base && base[1] ? base + 1 : dir);
    }
    r->rows = calloc(r->res.nrows + 1, sizeof *r->rows);
    if (!r->rows) {
        fb_error("report: out of memory");
        return 1;
    }
    for (size_t i = 0; i < r->res.nrows; i++)
        r->rows[i] = r->res.rows[i].row;
    r->nrows = r->res.nrows;
    fb_headline_infer_detail(r->rows, r->nrows);
    if (fb_report_plots(r->rows, r->nrows, &r->plots) != FB_OK ||
        !(r->state = calloc(r->plots.n + 1, sizeof *r->state))) {
        fb_error("report: out of memory");
        return 1;
    }
    r->present = true;
    return 0;
}

static void run_release(struct run_in *r)
{
    fb_results_read_release(&r->res);
    free(r->rows);
    cJSON_Delete(r->env);
    cJSON_Delete(r->doctor);
    fb_nccl_report_release(&r->nccl);
    fb_report_plots_release(&r->plots);
    free(r->state);
    memset(r, 0, sizeof *r);
}

/* launches.csv as `sweep` writes it (docs/sweep.md): variant and command columns required;
 * exit_status and run_dir (the launch's folder, relative to the sweep's; default: the
 * variant's name) are read when there. */
static int launches_load(const char *top, const char *path, struct launch **out, size_t *n)
{
    struct fb_csv_table t;
    char err[700];
    fb_status st = fb_csv_table_read(path, &t, err, sizeof err);
    struct launch *l = NULL;
    int rc = 0;

    *out = NULL;
    *n = 0;
    if (st != FB_OK) {
        fb_error("report: %s", err);
        return st == FB_ERR_NOMEM ? 1 : 2;
    }
    if (!t.nrows || !fb_csv_table_get(&t, 1, "variant") || !fb_csv_table_get(&t, 1, "command")) {
        fb_error("report: %s:1: %s", path,
                 t.nrows ? "no 'variant' or 'command' column in the header" : "no launches");
        rc = 2;
        goto out;
    }
    if (!(l = calloc(t.nrows, sizeof *l))) {
        fb_error("report: out of memory");
        rc = 1;
        goto out;
    }
    for (size_t i = 1; i <= t.nrows; i++) {
        struct launch *x = &l[i - 1];
        const char *variant = fb_csv_table_get(&t, i, "variant");
        const char *dir = fb_csv_table_get(&t, i, "run_dir");
        const char *status = fb_csv_table_get(&t, i, "exit_status");
        char folder[4096], csv[4200];
        struct stat sb;

        x->line = t.line[i];
        if (!variant[0] || strchr(variant, '/') || strcmp(variant, "..") == 0 ||
            strcmp(variant, ".") == 0) {
            fb_error("report: %s:%zu: variant '%s' is not a folder name", path, x->line, variant);
            rc = 2;
            goto out;
        }
        snprintf(x->variant, sizeof x->variant, "%s", variant);
        snprintf(x->command, sizeof x->command, "%s", fb_csv_table_get(&t, i, "command"));
        snprintf(x->exit_status, sizeof x->exit_status, "%s", status ? status : "");
        if (snprintf(folder, sizeof folder, "%s/%s", top, dir && dir[0] ? dir : variant) >=
            (int)sizeof folder) {
            fb_error("report: %s:%zu: the launch's folder name is too long", path, x->line);
            rc = 2;
            goto out;
        }
        memcpy(x->run.dir, folder, sizeof folder);
        /* A launch that failed may have left no run: said in the summary, not an error. */
        snprintf(csv, sizeof csv, "%s/results.csv", folder);
        if (stat(csv, &sb) != 0 && status && strcmp(status, "0") != 0 && status[0])
            continue;
        if ((rc = run_load(&x->run, folder)) != 0) {
            fb_error("report: (launch '%s' of %s:%zu)", variant, path, x->line);
            goto out;
        }
    }
    *out = l;
    *n = t.nrows;
    l = NULL;
out:
    if (l) {
        for (size_t i = 0; i < t.nrows; i++)
            run_release(&l[i].run);
        free(l);
    }
    fb_csv_table_release(&t);
    return rc;
}

/* ---- plots ---- */

static int write_text(const char *path, const char *a, const char *b, const char *c,
                      const char *d)
{
    struct fb_atomic_file af;

    if (fb_atomic_open(&af, path) != FB_OK)
        return 1;
    fputs(a, af.f);
    if (b)
        fputs(b, af.f);
    if (c)
        fputs(c, af.f);
    if (d)
        fputs(d, af.f);
    if (ferror(af.f)) {
        fb_error("report: cannot write '%s': %s", af.tmp, strerror(errno));
        fb_atomic_abort(&af);
        return 1;
    }
    return fb_atomic_commit(&af) == FB_OK ? 0 : 1;
}

/* Writes each plot's .dat and .gp into dir/plots and, with gnuplot, draws it under a temporary
 * name, renamed when gnuplot has finished. */
static int run_plots(struct run_in *r, const char *gnuplot)
{
    char plots[4200], path[4400], from[4400], head[600], setup[128], err[4500];
    const char *common = fb_plot_template_find("common");

    if (!r->plots.n)
        return 0;
    snprintf(plots, sizeof plots, "%s/plots", r->dir);
    if (fb_mkdirs(plots) != 0) {
        fb_error("report: cannot create '%s': %s", plots, strerror(errno));
        return 1;
    }
    for (size_t i = 0; i < r->plots.n; i++) {
        const struct fb_plot *p = &r->plots.p[i];
        const char *tmpl = fb_plot_template_find(p->template);

        if (!tmpl || !common) {
            fb_error("report: no template '%s' in this binary", p->template);
            return 1;
        }
        snprintf(path, sizeof path, "%s/%s.dat", plots, p->name);
        if (write_text(path, p->dat, NULL, NULL, NULL))
            return 1;
        snprintf(head, sizeof head,
                 "# %s.gp: written by `fabricbench report` for run %s from the template "
                 "plots/%s.gp.\n# Redraw %s.png and %s.svg from %s.dat with: gnuplot %s.gp "
                 "(in this folder); edit freely.\n",
                 p->name, r->id, p->template, p->name, p->name, p->name, p->name);
        snprintf(path, sizeof path, "%s/%s.gp", plots, p->name);
        if (write_text(path, head, p->vars, common, tmpl))
            return 1;
        if (!gnuplot) {
            r->state[i] = PLOT_SKIPPED;
            continue;
        }
        snprintf(setup, sizeof setup, "out = '.%s.tmp'", p->name);
        snprintf(path, sizeof path, "%s.gp", p->name);
        r->state[i] = PLOT_DRAWN;
        if (fb_gnuplot_run(gnuplot, plots, setup, path, err, sizeof err) != FB_OK) {
            fb_warn("report: %s: plot '%s' not drawn", err, p->name);
            r->state[i] = PLOT_FAILED;
        }
        for (int k = 0; k < 2; k++) {
            const char *ext = k ? "svg" : "png";
            snprintf(from, sizeof from, "%s/.%s.tmp.%s", plots, p->name, ext);
            snprintf(path, sizeof path, "%s/%s.%s", plots, p->name, ext);
            if (r->state[i] == PLOT_DRAWN && rename(from, path) != 0) {
                fb_warn("report: gnuplot made no '%s': plot '%s' not drawn", from, p->name);
                r->state[i] = PLOT_FAILED;
            }
            unlink(from);
        }
    }
    return 0;
}

/* ---- summary.md ---- */

/* A table cell: '|' escaped, line breaks flattened. */
static void md(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

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

    fprintf(f, "\n%s Environment\n\nFrom `env.json` (run status: %s).\n\n| | |\n|---|---|\n", h,
            jstr(env, "run_status") ? jstr(env, "run_status") : "unknown");
    snprintf(buf, sizeof buf, "%s (%s, %s)", jstr(env, "host.name") ? jstr(env, "host.name") : "?",
             jstr(env, "host.kernel") ? jstr(env, "host.kernel") : "?",
             jstr(env, "host.arch") ? jstr(env, "host.arch") : "?");
    env_row(f, "host", buf);
    snprintf(buf, sizeof buf, "%s; %.0f socket(s), %.0f cores, %.0f hardware threads, %.0f NUMA "
                              "node(s); %.1f GiB of memory",
             jstr(env, "host.cpu_model") ? jstr(env, "host.cpu_model") : "?",
             jnum(env, "host", "sockets"), jnum(env, "host", "cores"), jnum(env, "host", "pus"),
             jnum(env, "host", "numa_nodes"), mem / (1 << 30));
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
            fprintf(f, " | %s: ", jstr(x, "binding.verdict") ? jstr(x, "binding.verdict") : "?");
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
    fprintf(f, "From `doctor.json`: worst verdict **%s**.\n\n| check | verdict | what was seen | "
               "fix |\n|---|---|---|---|\n",
            jstr(doc, "doctor_worst") ? jstr(doc, "doctor_worst") : "?");
    cJSON_ArrayForEach(c, checks) {
        const char *v = jstr(c, "verdict") ? jstr(c, "verdict") : "?";
        fprintf(f, "| `");
        md(f, jstr(c, "name"));
        fprintf(f, strcmp(v, "PASS") == 0 ? "` | %s | " : "` | **%s** | ", v);
        md(f, jstr(c, "why"));
        fprintf(f, " | ");
        md(f, jstr(c, "fix") && *jstr(c, "fix") ? jstr(c, "fix") : "-");
        fprintf(f, " |\n");
    }
}

static void write_nccl(FILE *f, const struct run_in *r, const char *h)
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

static void write_headline(FILE *f, const struct run_in *r, const char *h)
{
    size_t *idx = malloc((r->nrows + 1) * sizeof *idx);
    size_t n;
    const char *bench = "";

    if (!idx) {
        fprintf(f, "\n(out of memory: no headline)\n");
        return;
    }
    n = fb_headline_select(r->rows, r->nrows, idx);
    fprintf(f, "\n%s Headline\n\nMedian of trials at the largest size of each case, on the most "
               "ranks of each scaling curve (the table `run` ends with); p05 and p95 over the "
               "trials. GB/s = 1e9 B/s; size bN = a batch of N.\n",
            h);
    if (!n)
        fprintf(f, "\nNo headline figures in this run.\n");
    for (size_t k = 0; k < n; k++) {
        const struct fb_row *w = &r->rows[idx[k]];
        char size[24], who[24];

        if (strcmp(w->bench, bench) != 0) {
            bench = w->bench;
            fprintf(f, "\n**%s**\n\n| case | transport | dtype | ranks | rank | size | metric | "
                       "median | unit | p05 | p95 |\n|---|---|---|---:|---:|---:|---|---:|---|---:|---:|\n",
                    bench);
        }
        fb_headline_cells(w, size, sizeof size, who, sizeof who);
        fprintf(f, "| ");
        md(f, w->kase);
        fprintf(f, " | ");
        md(f, w->transport);
        fprintf(f, " | %s | %d | %s | %s | %s | %.3f | %s | %.3f | %.3f |\n",
                w->dtype[0] ? w->dtype : "-", w->ranks, who, size, w->metric, w->st.median,
                w->unit, w->st.p05, w->st.p95);
    }
    free(idx);
}

/* Telemetry rows (case "telemetry"): one line per benchmark and rank, the median of each metric
 * over the samples (the maximum too for power and temperature). */
static void write_telemetry(FILE *f, const struct run_in *r, const char *h)
{
    static const char *const metric[] = {"gpu_util_pct",  "mem_util_pct", "mem_used_bytes",
                                         "power_w",       "sm_clock_mhz", "mem_clock_mhz",
                                         "temp_c",        "throttle_reasons"};
    enum { NM = sizeof metric / sizeof metric[0] };
    bool any = false;

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
    for (size_t i = 0; i < r->nrows; i++) {
        const struct fb_row *w = &r->rows[i], *v[NM] = {0};
        bool first = true;
        size_t samples = 0;

        if (strcmp(w->kase, "telemetry") != 0)
            continue;
        for (size_t j = 0; j < i && first; j++)
            first = !(strcmp(r->rows[j].kase, "telemetry") == 0 &&
                      strcmp(r->rows[j].bench, w->bench) == 0 && r->rows[j].src == w->src);
        if (!first)
            continue;
        for (size_t j = i; j < r->nrows; j++) {
            const struct fb_row *o = &r->rows[j];
            if (strcmp(o->kase, "telemetry") != 0 || strcmp(o->bench, w->bench) != 0 ||
                o->src != w->src)
                continue;
            for (size_t m = 0; m < NM; m++)
                if (!v[m] && strcmp(o->metric, metric[m]) == 0) {
                    v[m] = o;
                    samples = o->st.samples > samples ? o->st.samples : samples;
                }
        }
        fprintf(f, "| %s | ", w->bench);
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
}

/* prefix: the run folder relative to the summary ("" or "<variant>/"). */
static void write_plots_md(FILE *f, const struct run_in *r, const char *h, const char *prefix,
                           bool no_plots, bool no_gnuplot)
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
    if (no_gnuplot)
        fprintf(f, "Plots skipped: gnuplot was not found on PATH. Each plot's script and data are "
                   "in `%splots/`: install gnuplot and run `gnuplot <name>.gp` there (or "
                   "`fabricbench report` again).\n",
                prefix);
    for (size_t i = 0; i < r->plots.n; i++) {
        const struct fb_plot *p = &r->plots.p[i];
        fprintf(f, "\n%s# `%s`\n\n", h, p->name);
        md(f, p->caption);
        fprintf(f, ".\n\n");
        if (r->state[i] == PLOT_DRAWN)
            fprintf(f, "![%s](%splots/%s.png)\n\n[SVG](%splots/%s.svg) · ", p->name, prefix,
                    p->name, prefix, p->name);
        else if (r->state[i] == PLOT_FAILED)
            fprintf(f, "(gnuplot failed on this plot: see the script) ");
        fprintf(f, "[gnuplot script](%splots/%s.gp) · [data](%splots/%s.dat)\n", prefix, p->name,
                prefix, p->name);
    }
}

static void write_run_md(FILE *f, const struct run_in *r, const char *h, const char *prefix,
                         bool no_plots, bool no_gnuplot)
{
    write_environment(f, r->env, h);
    write_doctor(f, r->doctor, h);
    write_nccl(f, r, h);
    write_headline(f, r, h);
    write_telemetry(f, r, h);
    write_plots_md(f, r, h, prefix, no_plots, no_gnuplot);
}

static int write_summary(const struct run_in *r, bool no_plots, bool no_gnuplot)
{
    struct fb_atomic_file af;
    char path[4200];

    snprintf(path, sizeof path, "%s/summary.md", r->dir);
    if (fb_atomic_open(&af, path) != FB_OK)
        return 1;
    fprintf(af.f, "# fabricbench run `");
    md(af.f, r->id);
    fprintf(af.f, "`\n\n%zu rows in `results.csv` (columns and metrics: results/SCHEMA.md). "
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
static void launch_figures(FILE *f, const struct run_in *r)
{
    size_t *idx = malloc((r->nrows + 1) * sizeof *idx);
    size_t n, shown = 0;
    const char *bench = "";

    if (!idx)
        return;
    n = fb_headline_select(r->rows, r->nrows, idx);
    for (size_t k = 0; k < n; k++) {
        const struct fb_row *w = &r->rows[idx[k]];
        char size[24], who[24];
        if (strcmp(w->bench, bench) == 0)
            continue;
        bench = w->bench;
        fb_headline_cells(w, size, sizeof size, who, sizeof who);
        fprintf(f, "%s%s %s %s, %d rank%s, %s: %.3f %s", shown++ ? "<br>" : "", w->bench,
                w->kase, w->metric, w->ranks, w->ranks == 1 ? "" : "s", size, w->st.median,
                w->unit);
    }
    if (!shown)
        fprintf(f, "-");
    free(idx);
}

static int write_sweep_summary(const char *top, const struct launch *l, size_t n, bool no_plots,
                               bool no_gnuplot)
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
        fprintf(af.f, "| `");
        md(af.f, l[i].variant);
        fprintf(af.f, "` | `");
        md(af.f, l[i].command);
        fprintf(af.f, "` | ");
        md(af.f, l[i].exit_status[0] ? l[i].exit_status : "?");
        fprintf(af.f, " | ");
        if (l[i].run.present)
            launch_figures(af.f, &l[i].run);
        else
            fprintf(af.f, "no results");
        fprintf(af.f, " | ");
        if (l[i].run.present) {
            const char *rel = l[i].run.dir + strlen(top) + 1;
            fprintf(af.f, "[summary](%s/summary.md)", rel);
        } else {
            fprintf(af.f, "-");
        }
        fprintf(af.f, " |\n");
    }
    for (size_t i = 0; i < n; i++) {
        fprintf(af.f, "\n## Launch `");
        md(af.f, l[i].variant);
        fprintf(af.f, "`\n\n```\n%s\n```\n\nExit status: %s.", l[i].command,
                l[i].exit_status[0] ? l[i].exit_status : "unknown");
        if (!l[i].run.present) {
            fprintf(af.f, " No `results.csv` in `%s`: the launch failed before measuring.\n",
                    l[i].run.dir + strlen(top) + 1);
            continue;
        }
        snprintf(prefix, sizeof prefix, "%.290s/", l[i].run.dir + strlen(top) + 1);
        fprintf(af.f, " Full report: [%ssummary.md](%ssummary.md).\n", prefix, prefix);
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

/* Plots then summary.md of one run; counts what was drawn. */
static int report_run(struct run_in *r, bool no_plots, const char *gnuplot, size_t *drawn)
{
    int rc = 0;

    if (!no_plots)
        rc = run_plots(r, gnuplot);
    if (!rc)
        rc = write_summary(r, no_plots, !gnuplot);
    for (size_t i = 0; i < r->plots.n; i++)
        *drawn += r->state[i] == PLOT_DRAWN;
    return rc;
}

int fb_cmd_report(int argc, char **argv)
{
    static const struct option options[] = {
        {"no-plots", no_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool no_plots = false;
    char why[160], gnuplot_path[4096], top[4096], launches[4200];
    const char *gnuplot = NULL;
    struct run_in *one = NULL;
    struct launch *l = NULL;
    size_t nl = 0, drawn = 0, nplots = 0;
    struct stat sb;
    int c, rc = 2;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (c) {
        case 'n': no_plots = true; break;
        case 'h': usage(); return 0;
        default:
            fb_cli_option_error(c, argv, why, sizeof why);
            fb_error("report: %s", why);
            return 2;
        }
    }
    if (argc - optind != 1) {
        fb_error("report: expected one run folder (see `fabricbench report --help`)");
        return 2;
    }
    if (snprintf(top, sizeof top, "%s", argv[optind]) >= (int)sizeof top) {
        fb_error("report: path too long: '%.60s...'", argv[optind]);
        return 2;
    }
    for (size_t len = strlen(top); len > 1 && top[len - 1] == '/'; len--)
        top[len - 1] = '\0';
    if (stat(top, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fb_error("report: cannot open run folder '%s': %s", top,
                 stat(top, &sb) != 0 ? strerror(errno) : "not a folder");
        return 2;
    }
    /* Everything is read and checked before anything is written. */
    snprintf(launches, sizeof launches, "%s/launches.csv", top);
    if (access(launches, F_OK) == 0) {
        if ((rc = launches_load(top, launches, &l, &nl)) != 0)
            goto out;
    } else {
        if (!(one = calloc(1, sizeof *one))) {
            fb_error("report: out of memory");
            rc = 1;
            goto out;
        }
        if ((rc = run_load(one, top)) != 0)
            goto out;
    }
    if (!no_plots && fb_gnuplot_find(gnuplot_path, sizeof gnuplot_path))
        gnuplot = gnuplot_path;
    rc = 1;
    if (one) {
        if (report_run(one, no_plots, gnuplot, &drawn))
            goto out;
        nplots = one->plots.n;
    } else {
        for (size_t i = 0; i < nl; i++) {
            if (!l[i].run.present)
                continue;
            if (report_run(&l[i].run, no_plots, gnuplot, &drawn))
                goto out;
            nplots += l[i].run.plots.n;
        }
        if (write_sweep_summary(top, l, nl, no_plots, !gnuplot))
            goto out;
    }
    rc = 0;
    if (no_plots)
        fb_out("report: %s/summary.md (plots not drawn: --no-plots)\n", top);
    else if (!gnuplot && nplots)
        fb_out("report: %s/summary.md; gnuplot not found on PATH: %zu plot%s skipped (scripts "
               "and data in plots/)\n",
               top, nplots, nplots == 1 ? "" : "s");
    else
        fb_out("report: %s/summary.md, %zu of %zu plot%s drawn (PNG and SVG in plots/)\n", top,
               drawn, nplots, nplots == 1 ? "" : "s");
out:
    if (one)
        run_release(one);
    free(one);
    for (size_t i = 0; i < nl; i++)
        run_release(&l[i].run);
    free(l);
    return rc;
}
