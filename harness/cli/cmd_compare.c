/* `fabricbench compare BASE NEW`: the fingerprint difference, then every joined row's verdict
 * on the terminal, and compare.csv, compare.md and overlaid gnuplot plots written atomically
 * into the output folder. No MPI. The rule itself lives in harness/analysis/compare.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cli.h"
#include "commands.h"
#include "compare.h"
#include "csv.h"
#include "gnuplot.h"
#include "log.h"
#include "run_state.h"

enum { MAX_SERIES_PER_PLOT = 12, TERMINAL_FP_LINES = 40 };

struct side {
    char dir[4096];
    char csv[4200];
    char env[4200];
    char id[128];
    bool has_env;
    struct fb_read_results res;
};

static void usage(void)
{
    printf("usage: fabricbench compare [--threshold PCT] [--out DIR] [--machines] BASE NEW\n"
           "Compares two runs: BASE and NEW are run folders (or their results.csv). Prints the\n"
           "fingerprint difference, then each row joined on its keys with the ratio of medians\n"
           "NEW/BASE and a verdict; writes compare.csv, compare.md and plots (base against new).\n"
           "A change is a REGRESSION only when it is worse by more than the threshold AND the\n"
           "two runs' [p05, p95] trial bands do not overlap (docs/compare.md).\n\n"
           "  --threshold PCT  smallest change that counts, in percent (default 5)\n"
           "  --out DIR        where to write (default NEW/compare-vs-<BASE run id>)\n"
           "  --machines       BASE and NEW are two machines: 'better'/'worse' wording, and\n"
           "                   exit 0 whichever is better\n"
           "  --help           this text\n\n"
           "exit: 0 no regression, 1 a regression (not with --machines) or an output error,\n"
           "2 bad usage or input (a missing run, a malformed results.csv)\n");
}

/* BASE or NEW: a folder holding results.csv, or a results.csv itself. */
static int side_open(struct side *s, const char *arg)
{
    struct stat sb;
    char err[600];
    const char *slash;
    fb_status st;

    memset(s, 0, sizeof *s);
    if (stat(arg, &sb) != 0) {
        fb_error("compare: cannot open '%s': %s", arg, strerror(errno));
        return 2;
    }
    if (S_ISDIR(sb.st_mode)) {
        snprintf(s->dir, sizeof s->dir, "%s", arg);
        snprintf(s->csv, sizeof s->csv, "%s/results.csv", arg);
    } else {
        snprintf(s->csv, sizeof s->csv, "%s", arg);
        slash = strrchr(arg, '/');
        if (slash)
            snprintf(s->dir, sizeof s->dir, "%.*s", (int)(slash - arg), arg);
        else
            snprintf(s->dir, sizeof s->dir, ".");
        if (!s->dir[0])
            snprintf(s->dir, sizeof s->dir, "/");
    }
    snprintf(s->env, sizeof s->env, "%s/env.json", s->dir);
    s->has_env = access(s->env, R_OK) == 0;
    st = fb_results_read(s->csv, &s->res, err, sizeof err);
    if (st != FB_OK) {
        fb_error("compare: %s", err);
        return st == FB_ERR_NOMEM ? 1 : 2;
    }
    if (s->res.nrows)
        snprintf(s->id, sizeof s->id, "%s", s->res.rows[0].run_id);
    else {
        size_t len = strlen(s->dir);
        while (len > 1 && s->dir[len - 1] == '/')
            len--;
        const char *base = memrchr(s->dir, '/', len);
        base = base ? base + 1 : s->dir;
        snprintf(s->id, sizeof s->id, "%.*s", (int)(len - (size_t)(base - s->dir)), base);
    }
    return 0;
}

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

static void print_fingerprint(FILE *f, bool md, const struct fb_fp_diff *d, size_t n,
                              const char *bname, const char *nname, size_t limit)
{
    if (md) {
        fprintf(f, "| what | %s | %s |\n|---|---|---|\n", bname, nname);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "| `%s` | %s | %s |\n", d[i].path, d[i].base, d[i].cur);
        return;
    }
    for (size_t i = 0; i < n && i < limit; i++)
        fprintf(f, "  %-40s %s  ->  %s\n", d[i].path, d[i].base, d[i].cur);
    if (n > limit)
        fprintf(f, "  ... and %zu more (all in compare.md)\n", n - limit);
}

static void print_table(const struct fb_comparison *c, bool machines)
{
    char src[16], dst[16], bytes[24], batch[24], bm[24], nm[24], ratio[24];

    fb_out("%-11s %-18s %-16s %-14s %5s %4s %4s %12s %5s %-8s %-16s %12s %12s %7s\n", "verdict",
           "bench", "case", "transport", "ranks", "src", "dst", "bytes", "batch", "dtype",
           "metric", machines ? "first" : "base", machines ? "second" : "new", "ratio");
    for (size_t i = 0; i < c->n; i++) {
        const struct fb_cmp_entry *e = &c->e[i];
        const struct fb_row *r = any_row(e);
        fmt_opt(src, sizeof src, r->src);
        fmt_opt(dst, sizeof dst, r->dst);
        fmt_opt(bytes, sizeof bytes, r->bytes);
        fmt_opt(batch, sizeof batch, r->batch);
        snprintf(bm, sizeof bm, e->base ? "%.4g" : "-", e->base ? e->base->row.st.median : 0);
        snprintf(nm, sizeof nm, e->cur ? "%.4g" : "-", e->cur ? e->cur->row.st.median : 0);
        snprintf(ratio, sizeof ratio, isnan(e->ratio) ? "-" : "%.3f", e->ratio);
        fb_out("%-11s %-18s %-16s %-14s %5d %4s %4s %12s %5s %-8s %-16s %12s %12s %7s%s\n",
               fb_compare_verdict_str(e->verdict, machines), r->bench, r->kase, r->transport,
               r->ranks, src, dst, bytes, batch, r->dtype[0] ? r->dtype : "-", r->metric, bm,
               nm, ratio, e->threshold_only && e->verdict != FB_CMP_SAME ? " (1 sample)" : "");
    }
}

static int write_csv(const char *path, const struct fb_comparison *c, bool machines)
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
            f[24] = e->threshold_only ? "threshold-only" : "threshold+bands";
        fb_csv_row(af.f, f, 27);
    }
    if (ferror(af.f)) {
        fb_error("compare: cannot write '%s': %s", af.tmp, strerror(errno));
        fb_atomic_abort(&af);
        return 1;
    }
    return fb_atomic_commit(&af) == FB_OK ? 0 : 1;
}

static void md_rows(FILE *f, const struct fb_comparison *c, enum fb_cmp_verdict v, bool machines,
                    const char *title)
{
    char key[160], ratio[32];

    if (!c->count[v])
        return;
    fprintf(f, "\n### %s (%zu)\n\n", title, c->count[v]);
    fprintf(f, "| bench | case | transport | ranks | src | dst | bytes | batch | dtype | metric "
               "| %s | %s | ratio | change |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
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
        snprintf(key, sizeof key, "%s", r->kase);
        for (char *p = key; *p; p++)
            if (*p == '|')
                *p = '/';
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
                 e->threshold_only ? " (1 sample)" : "");
        fprintf(f, "| %s | %s | %s | %d | %s | %s | %s | %s | %s | %s %s | %s | %s | %s | %s |\n",
                r->bench, key, r->transport, r->ranks, src, dst, bytes, batch,
                r->dtype[0] ? r->dtype : "-", r->metric, r->unit, bm, nm, ratio, ch);
    }
}

/* ---- plots ---- */

/* The series a point belongs to: every key but bytes. */
static int series_cmp(const struct fb_row *a, const struct fb_row *b)
{
    int d;
    if ((d = strcmp(a->bench, b->bench)) || (d = strcmp(a->metric, b->metric)) ||
        (d = strcmp(a->kase, b->kase)) || (d = strcmp(a->backend, b->backend)) ||
        (d = strcmp(a->transport, b->transport)) || (d = a->ranks - b->ranks) ||
        (d = a->nodes - b->nodes) || (d = a->src - b->src) || (d = a->dst - b->dst) ||
        (d = (a->batch > b->batch) - (a->batch < b->batch)) || (d = strcmp(a->dtype, b->dtype)))
        return d;
    return 0;
}

static int point_cmp(const void *x, const void *y)
{
    const struct fb_cmp_entry *a = *(const struct fb_cmp_entry *const *)x;
    const struct fb_cmp_entry *b = *(const struct fb_cmp_entry *const *)y;
    int d = series_cmp(&a->base->row, &b->base->row);
    if (d)
        return d;
    return (a->base->row.bytes > b->base->row.bytes) - (a->base->row.bytes < b->base->row.bytes);
}

static void safe_name(char *dst, size_t len, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < len; i++) {
        char c = src[i];
        dst[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                         c == '_' || c == '-'
                     ? c
                     : '_';
    }
    dst[i] = '\0';
}

/* One plot per (bench, metric) with up to MAX_SERIES_PER_PLOT series that have more than one
 * size: base dashed, new solid, the same colour. Lists the PNGs made in md. */
static int write_plots(const char *out, const struct fb_comparison *c, bool machines,
                       const char *bname, const char *nname, FILE *md, bool *gnuplot_missing)
{
    const struct fb_cmp_entry **pts = malloc((c->n + 1) * sizeof *pts);
    size_t np = 0, i = 0, made = 0;
    int rc = 0;

    char gnuplot[4096], gperr[4400];

    if (!pts)
        return 1;
    if (!fb_gnuplot_find(gnuplot, sizeof gnuplot)) {
        *gnuplot_missing = true;
        fb_warn("compare: gnuplot not found on PATH: plots skipped");
    }
    for (size_t k = 0; k < c->n; k++)
        if (c->e[k].base && c->e[k].cur && c->e[k].base->row.bytes >= 0 &&
            isfinite(c->e[k].base->row.st.median) && isfinite(c->e[k].cur->row.st.median))
            pts[np++] = &c->e[k];
    qsort(pts, np, sizeof *pts, point_cmp);
    while (i < np && !*gnuplot_missing) {
        /* One (bench, metric) group: [i, j). */
        size_t j = i, nseries = 0, skipped = 0;
        const struct fb_row *g = &pts[i]->base->row;
        char name[96], bench[32], metric[32], gp[4300], png[4300], tmp[4400];
        struct fb_atomic_file af;

        while (j < np && !strcmp(pts[j]->base->row.bench, g->bench) &&
               !strcmp(pts[j]->base->row.metric, g->metric))
            j++;
        safe_name(bench, sizeof bench, g->bench);
        safe_name(metric, sizeof metric, g->metric);
        snprintf(name, sizeof name, "compare-%s-%s", bench, metric);
        if (snprintf(gp, sizeof gp, "%s/%s.gp", out, name) >= (int)sizeof gp ||
            snprintf(png, sizeof png, "%s/%s.png", out, name) >= (int)sizeof png ||
            snprintf(tmp, sizeof tmp, "%s.tmp", png) >= (int)sizeof tmp) {
            fb_error("compare: output path too long: '%s'", out);
            rc = 1;
            break;
        }
        if (fb_atomic_open(&af, gp) != FB_OK) {
            rc = 1;
            break;
        }
        fprintf(af.f, "# %s vs %s: %s %s against message size, base dashed, new solid.\n"
                      "# Written by `fabricbench compare`; rerun with: gnuplot %s.gp\n",
                bname, nname, g->bench, g->metric, name);
        char titles[MAX_SERIES_PER_PLOT][160];
        for (size_t s = i; s < j;) {
            size_t e = s;
            while (e < j && !series_cmp(&pts[e]->base->row, &pts[s]->base->row))
                e++;
            if (e - s > 1) {
                if (nseries == MAX_SERIES_PER_PLOT) {
                    skipped++;
                } else {
                    const struct fb_row *r = &pts[s]->base->row;
                    char extra[64] = "";
                    if (r->src >= 0)
                        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " src %d",
                                 r->src);
                    if (r->dst >= 0)
                        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), " dst %d",
                                 r->dst);
                    if (r->batch >= 0)
                        snprintf(extra + strlen(extra), sizeof extra - strlen(extra),
                                 " batch %ld", r->batch);
                    snprintf(titles[nseries], sizeof titles[nseries], "%s %s %s%s%s %dr%s",
                             r->kase, r->transport, r->dtype, r->dtype[0] ? " " : "", r->backend,
                             r->ranks, extra);
                    for (int side = 0; side < 2; side++) {
                        fprintf(af.f, "$s%zu_%s << EOD\n", nseries, side ? "new" : "base");
                        for (size_t p = s; p < e; p++) {
                            const struct fb_read_row *rr = side ? pts[p]->cur : pts[p]->base;
                            fprintf(af.f, "%lld %.10g %.10g %.10g\n", rr->row.bytes,
                                    rr->row.st.median, rr->row.st.p05, rr->row.st.p95);
                        }
                        fprintf(af.f, "EOD\n");
                    }
                    nseries++;
                }
            }
            s = e;
        }
        if (!nseries) {
            fb_atomic_abort(&af);
            i = j;
            continue;
        }
        fprintf(af.f, "set terminal pngcairo size 1100,650 noenhanced font \",10\"\nset output ");
        fb_gnuplot_quote(af.f, tmp);
        fprintf(af.f, "\nset title ");
        {
            char t[400];
            snprintf(t, sizeof t, "%s %s: %s (dashed) vs %s (solid), median with p05-p95%s",
                     g->bench, g->metric, bname, nname,
                     skipped ? " (more series in compare.csv)" : "");
            fb_gnuplot_quote(af.f, t);
        }
        fprintf(af.f, "\nset xlabel 'message size (bytes, binary prefixes, log scale)'\n"
                      "set ylabel ");
        {
            char t[64];
            snprintf(t, sizeof t, "%s (%s)", g->metric, g->unit);
            fb_gnuplot_quote(af.f, t);
        }
        fprintf(af.f, "\nset logscale x 2\nset format x \"%%.0b %%BB\"\nset grid\n"
                      "set key outside right top\nplot \\\n");
        for (size_t s = 0; s < nseries; s++) {
            fprintf(af.f, "  $s%zu_base using 1:2:3:4 with yerrorlines dt 2 lc %zu title ", s,
                    s + 1);
            {
                char t[200];
                /* a title cut short is still a title */
                if (snprintf(t, sizeof t, "%s: %s", machines ? "first" : "base", titles[s]) < 0)
                    t[0] = '\0';
                fb_gnuplot_quote(af.f, t);
            }
            fprintf(af.f, ", \\\n  $s%zu_new using 1:2:3:4 with yerrorlines dt 1 lc %zu title ", s,
                    s + 1);
            {
                char t[200];
                if (snprintf(t, sizeof t, "%s: %s", machines ? "second" : "new", titles[s]) < 0)
                    t[0] = '\0';
                fb_gnuplot_quote(af.f, t);
            }
            fprintf(af.f, "%s\n", s + 1 < nseries ? ", \\" : "");
        }
        fprintf(af.f, "set output\n");
        if (fb_atomic_commit(&af) != FB_OK) {
            rc = 1;
            break;
        }
        if (fb_gnuplot_run(gnuplot, NULL, NULL, gp, gperr, sizeof gperr) != FB_OK ||
            rename(tmp, png) != 0) {
            unlink(tmp);
            fb_warn("compare: gnuplot failed on '%s': plot skipped", gp);
        } else {
            fprintf(md, "\n![%s %s](%s.png)\n", g->bench, g->metric, name);
            made++;
        }
        i = j;
    }
    if (!made)
        fprintf(md, "\nNo plots (no series with more than one size%s).\n",
                *gnuplot_missing ? ", or no gnuplot" : "");
    free(pts);
    return rc;
}

static int write_md(const char *path, const char *out, const struct side *b, const struct side *n,
                    const struct fb_comparison *c, double threshold, bool machines,
                    const struct fb_fp_diff *d, size_t nd, const char *fp_note)
{
    struct fb_atomic_file af;
    bool no_gnuplot = false;
    int rc;

    if (fb_atomic_open(&af, path) != FB_OK)
        return 1;
    if (machines)
        fprintf(af.f, "# %s vs %s: which is better where\n\n", b->id, n->id);
    else
        fprintf(af.f, "# Regression report: %s (base) vs %s (new)\n\n", b->id, n->id);
    fprintf(af.f,
            "- %s: `%s`\n- %s: `%s`\n- threshold: %.4g%%\n- rule: a change counts when "
            "|new/base - 1| > threshold **and** the two runs' [p05, p95] trial bands do not "
            "overlap; rows with one sample on either side: threshold only (see "
            "docs/compare.md)\n",
            machines ? "first" : "base", b->csv, machines ? "second" : "new", n->csv,
            threshold * 100);
    fprintf(af.f, "\n## Fingerprint differences\n\n");
    if (fp_note)
        fprintf(af.f, "%s\n", fp_note);
    else if (!nd)
        fprintf(af.f, "None: the two env.json files agree.\n");
    else
        print_fingerprint(af.f, true, d, nd, b->id, n->id, nd);
    fprintf(af.f, "\n## Summary\n\n| verdict | rows |\n|---|---|\n");
    for (int v = 0; v <= FB_CMP_ONLY_NEW; v++)
        if (c->count[v])
            fprintf(af.f, "| %s | %zu |\n", fb_compare_verdict_str(v, machines), c->count[v]);
    md_rows(af.f, c, FB_CMP_REGRESSION, machines,
            machines ? "Worse on the second" : "Regressions");
    md_rows(af.f, c, FB_CMP_IMPROVED, machines, machines ? "Better on the second" : "Improved");
    md_rows(af.f, c, FB_CMP_NOISE, machines,
            "Beyond the threshold but within the runs' noise (not flagged)");
    md_rows(af.f, c, FB_CMP_CHANGED, machines, "Changed, metric without a better way (not flagged)");
    md_rows(af.f, c, FB_CMP_NA, machines, "No ratio (zero or non-finite median)");
    md_rows(af.f, c, FB_CMP_ONLY_BASE, machines,
            machines ? "Only on the first" : "Only in base (not flagged)");
    md_rows(af.f, c, FB_CMP_ONLY_NEW, machines,
            machines ? "Only on the second" : "Only in new (not flagged)");
    md_rows(af.f, c, FB_CMP_SAME, machines, "Within the threshold");
    fprintf(af.f, "\n## Plots\n");
    rc = write_plots(out, c, machines, b->id, n->id, af.f, &no_gnuplot);
    if (rc || ferror(af.f)) {
        fb_error("compare: cannot write '%s'", af.tmp);
        fb_atomic_abort(&af);
        return 1;
    }
    return fb_atomic_commit(&af) == FB_OK ? 0 : 1;
}

int fb_cmd_compare(int argc, char **argv)
{
    static const struct option options[] = {
        {"threshold", required_argument, NULL, 't'},
        {"out", required_argument, NULL, 'o'},
        {"machines", no_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct side *b = NULL, *n = NULL;
    struct fb_comparison cmp = {0};
    struct fb_fp_diff *diffs = NULL;
    size_t ndiffs = 0;
    double threshold = FB_COMPARE_THRESHOLD_DEFAULT;
    const char *out_arg = NULL, *fp_note = NULL;
    char why[160], out[4300], path[4400], fperr[600], note[800];
    bool machines = false;
    int c, rc = 2;

    optind = 0; /* a full restart of getopt (see cli.c) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (c) {
        case 't': {
            char *end;
            errno = 0;
            double pct = strtod(optarg, &end);
            if (end == optarg || *end || errno || !(pct >= 0 && pct <= 1000)) {
                fb_error("compare: bad value for --threshold: '%s' is not a percentage from 0 "
                         "to 1000",
                         optarg);
                return 2;
            }
            threshold = pct / 100;
            break;
        }
        case 'o': out_arg = optarg; break;
        case 'm': machines = true; break;
        case 'h': usage(); return 0;
        default:
            fb_cli_option_error(c, argv, why, sizeof why);
            fb_error("compare: %s", why);
            return 2;
        }
    }
    if (argc - optind != 2) {
        fb_error("compare: expected two runs, BASE and NEW (see `fabricbench compare --help`)");
        return 2;
    }
    b = calloc(1, sizeof *b);
    n = calloc(1, sizeof *n);
    if (!b || !n) {
        fb_error("compare: out of memory");
        rc = 1;
        goto out;
    }
    if ((rc = side_open(b, argv[optind])) != 0 || (rc = side_open(n, argv[optind + 1])) != 0)
        goto out;
    /* An incomplete run is compared on the points it finished: said, not refused. */
    for (int k = 0; k < 2; k++) {
        char why[1200];
        const struct side *sd = k ? n : b;
        if (fb_run_state_incomplete_dir(sd->dir, why, sizeof why))
            fb_warn("compare: run '%s' is incomplete (%s); only its finished points are "
                    "compared", sd->id, why);
    }
    rc = 1;
    if (out_arg)
        snprintf(out, sizeof out, "%s", out_arg);
    else
        snprintf(out, sizeof out, "%s/compare-vs-%s", n->dir, b->id);
    if (fb_mkdirs(out) != 0) {
        fb_error("compare: cannot create '%s': %s", out, strerror(errno));
        rc = 2;
        goto out;
    }

    /* The fingerprint first: what changed is the likely cause of what follows. */
    if (!b->has_env || !n->has_env) {
        /* a note cut short still says which file */
        if (snprintf(note, sizeof note, "No fingerprint difference: '%s' cannot be read.",
                     !b->has_env ? b->env : n->env) < 0)
            note[0] = '\0';
        fp_note = note;
    } else if (fb_compare_fingerprints(b->env, n->env, &diffs, &ndiffs, fperr, sizeof fperr) !=
               FB_OK) {
        snprintf(note, sizeof note, "No fingerprint difference: %s", fperr);
        fp_note = note;
    }
    fb_out("fingerprint: %s (%s) vs %s (%s)\n", b->id, machines ? "first" : "base", n->id,
           machines ? "second" : "new");
    if (fp_note)
        fb_out("  %s\n", fp_note);
    else if (!ndiffs)
        fb_out("  no differences\n");
    else {
        fflush(stdout);
        print_fingerprint(stdout, false, diffs, ndiffs, b->id, n->id, TERMINAL_FP_LINES);
    }
    fb_out("\n");

    if (fb_compare_join(&b->res, &n->res, threshold, &cmp) != FB_OK) {
        fb_error("compare: out of memory");
        goto out;
    }
    print_table(&cmp, machines);
    fb_out("\n%zu rows: %zu %s, %zu %s, %zu noise, %zu same, %zu changed (no better way), "
           "%zu n/a, %zu only in %s, %zu only in %s (threshold %.4g%%)\n",
           cmp.n, cmp.count[FB_CMP_REGRESSION],
           fb_compare_verdict_str(FB_CMP_REGRESSION, machines), cmp.count[FB_CMP_IMPROVED],
           fb_compare_verdict_str(FB_CMP_IMPROVED, machines), cmp.count[FB_CMP_NOISE],
           cmp.count[FB_CMP_SAME], cmp.count[FB_CMP_CHANGED], cmp.count[FB_CMP_NA],
           cmp.count[FB_CMP_ONLY_BASE], b->id, cmp.count[FB_CMP_ONLY_NEW], n->id,
           threshold * 100);

    snprintf(path, sizeof path, "%s/compare.csv", out);
    if (write_csv(path, &cmp, machines) != 0)
        goto out;
    snprintf(path, sizeof path, "%s/compare.md", out);
    if (write_md(path, out, b, n, &cmp, threshold, machines, diffs, ndiffs, fp_note) != 0)
        goto out;
    fb_out("report: %s/compare.md, compare.csv\n", out);
    rc = (!machines && cmp.count[FB_CMP_REGRESSION]) ? 1 : 0;
out:
    fb_compare_release(&cmp);
    free(diffs);
    if (b)
        fb_results_read_release(&b->res);
    if (n)
        fb_results_read_release(&n->res);
    free(b);
    free(n);
    return rc;
}
