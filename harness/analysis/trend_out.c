/* trend's terminal verdict, trend.md, trend.csv and plots (trend_out.h). */
#include "trend_out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "compare.h"
#include "csv.h"
#include "escape.h"
#include "fp_volatile.h"
#include "gnuplot.h"
#include "gp_text.h"
#include "headline.h"
#include "log.h"
#include "md_text.h"
#include "run_folder.h"

/* "h2d pinned_h2d - 16M all bandwidth (GB/s)": the series' name, from its key. */
static void series_name(const struct fb_trend_series *s, char *buf, size_t len)
{
    char size[32], who[32];
    fb_headline_cells(&s->key, size, sizeof size, who, sizeof who);
    snprintf(buf, len, "%s %s %s %s %s %s (%s)", s->key.bench, s->key.kase, s->key.dtype[0] ?
             s->key.dtype : "-", size, who, s->key.metric, s->key.unit);
}

/* What changed in the fingerprint from run a to run b, volatile entries left out: up to three
 * "path: x -> y", likely causes first. */
static void step_label(const struct fb_trend_run *a, const struct fb_trend_run *b, char *buf,
                       size_t len)
{
    char ea[4200], eb[4200], err[512];
    struct fb_fp_diff *d = NULL;
    size_t nd = 0, shown = 0, kept = 0;
    snprintf(ea, sizeof ea, "%s/env.json", a->dir);
    snprintf(eb, sizeof eb, "%s/env.json", b->dir);
    buf[0] = '\0';
    if (fb_compare_fingerprints(ea, eb, &d, &nd, err, sizeof err) != FB_OK) {
        snprintf(buf, len, "fingerprint not compared: %s", err);
        return;
    }
    for (size_t i = 0; i < nd; i++) {
        if (fb_fp_volatile(d[i].path))
            continue;
        kept++;
        if (shown < 3) {
            size_t u = strlen(buf);
            snprintf(buf + u, len - u, "%s%s: %s -> %s", shown ? "; " : "", d[i].path,
                     d[i].base, d[i].cur);
            shown++;
        }
    }
    if (kept > shown) {
        size_t u = strlen(buf);
        snprintf(buf + u, len - u, "; %zu more", kept - shown);
    }
    if (!kept)
        snprintf(buf, len, "no fingerprint difference");
    free(d);
}

static int write_csv(const char *out, const struct fb_trend_run *runs, size_t nruns,
                     const struct fb_trend_series *s, size_t ns)
{
    char path[4200];
    struct fb_atomic_file af;
    snprintf(path, sizeof path, "%s/trend.csv", out);
    if (fb_atomic_open(&af, path) != FB_OK)
        return 1;
    /* every cell of the series' key (fb_compare_key_cmp's), so that series that differ only
     * in a rank (src), a pair (dst) or a transport are told apart; empty when not about one */
    fputs("series,bench,case,backend,transport,dtype,bytes,batch,ranks,nodes,src,dst,metric,unit,"
          "run,run_id,started,median,p05,p95,samples,step\n", af.f);
    for (size_t k = 0; k < ns; k++)
        for (size_t r = 0; r < nruns; r++) {
            const struct fb_trend_point *p = &s[k].pt[r];
            bool step = false;
            for (size_t j = 0; j < s[k].nsteps; j++)
                step |= s[k].steps[j].at == r;
            if (!p->present)
                continue;
            fprintf(af.f, "%zu,", k);
            fb_csv_field(af.f, s[k].key.bench);
            fputc(',', af.f);
            fb_csv_field(af.f, s[k].key.kase);
            fputc(',', af.f);
            fb_csv_field(af.f, s[k].key.backend);
            fputc(',', af.f);
            fb_csv_field(af.f, s[k].key.transport);
            fputc(',', af.f);
            fb_csv_field(af.f, s[k].key.dtype);
            /* bytes and batch empty when not about them, as in results.csv */
            fputc(',', af.f);
            if (s[k].key.bytes >= 0)
                fprintf(af.f, "%lld", s[k].key.bytes);
            fputc(',', af.f);
            if (s[k].key.batch >= 0)
                fprintf(af.f, "%ld", s[k].key.batch);
            fprintf(af.f, ",%d,%d,", s[k].key.ranks, s[k].key.nodes);
            if (s[k].key.src >= 0)
                fprintf(af.f, "%d", s[k].key.src);
            fputc(',', af.f);
            if (s[k].key.dst >= 0)
                fprintf(af.f, "%d", s[k].key.dst);
            fputc(',', af.f);
            fb_csv_field(af.f, s[k].key.metric);
            fputc(',', af.f);
            fb_csv_field(af.f, s[k].key.unit);
            fprintf(af.f, ",%zu,", r + 1);
            fb_csv_field(af.f, runs[r].id);
            fprintf(af.f, ",%s,%.10g,%.10g,%.10g,%zu,%d\n", runs[r].started, p->median, p->p05,
                    p->p95, p->samples, step);
        }
    return fb_atomic_commit(&af) == FB_OK ? 0 : 1;
}

/* trend-<k>.dat and .gp; drawn into .png and .svg when gnuplot is there. */
static int write_plot(const char *out, size_t k, const struct fb_trend_series *s, size_t nruns,
                      const char *gnuplot)
{
    char dat[4200], gp[4200], name[300], title[300], err[4400];
    struct fb_atomic_file af;
    snprintf(dat, sizeof dat, "%s/trend-%zu.dat", out, k);
    snprintf(gp, sizeof gp, "%s/trend-%zu.gp", out, k);
    if (fb_atomic_open(&af, dat) != FB_OK)
        return 1;
    fputs("# run median p05 p95\n", af.f);
    for (size_t r = 0; r < nruns; r++)
        if (s->pt[r].present)
            fprintf(af.f, "%zu %.10g %.10g %.10g\n", r + 1, s->pt[r].median, s->pt[r].p05,
                    s->pt[r].p95);
    if (fb_atomic_commit(&af) != FB_OK || fb_atomic_open(&af, gp) != FB_OK)
        return 1;
    series_name(s, title, sizeof title);
    fprintf(af.f, "# Written by `fabricbench trend`: series %zu over %zu runs, steps as dashed "
                  "lines.\n# Redraw with: gnuplot trend-%zu.gp\n", k, nruns, k);
    fputs("set title ", af.f);
    fb_gp_put_string(af.f, title);
    fprintf(af.f, "\nset xlabel 'run'\nset ylabel ");
    fb_gp_put_string(af.f, s->key.unit);
    fprintf(af.f, "\nset xrange [0.5:%zu.5]\nset xtics 1\nset grid\nset key off\n", nruns);
    for (size_t j = 0; j < s->nsteps; j++)
        fprintf(af.f, "set arrow from %.1f, graph 0 to %.1f, graph 1 nohead dt 2 lc rgb "
                      "'%s'\nset label 'x%.2f' at %.1f, graph 0.95 %s\n",
                s->steps[j].at + 0.5, s->steps[j].at + 0.5,
                s->steps[j].worse ? "#c0392b" : "#27ae60", s->steps[j].ratio,
                s->steps[j].at + 0.6, "left");
    snprintf(name, sizeof name, "trend-%zu", k);
    fprintf(af.f, "set terminal pngcairo size 900,500 noenhanced\nset output '%s.png'\n"
                  "plot 'trend-%zu.dat' using 1:2:3:4 with yerrorlines pt 7\n"
                  "set terminal svg size 900,500 noenhanced\nset output '%s.svg'\nreplot\n",
            name, k, name);
    if (fb_atomic_commit(&af) != FB_OK)
        return 1;
    if (gnuplot && fb_gnuplot_run(gnuplot, out, NULL, strrchr(gp, '/') + 1, err, sizeof err) !=
                       FB_OK)
        fb_warn("trend: plot %s not drawn: %s", name, err);
    return 0;
}

/* Whether a file trend writes may be written (fb_run_folder_output, the check of every output
 * a user names): nothing there or a regular file, never a folder, link or FIFO in its place.
 * Said in one line, before anything is written. */
static bool target_ok(const char *out, const char *name)
{
    char path[4200], err[4600];

    snprintf(path, sizeof path, "%s/%s", out, name);
    if (fb_run_folder_output("output file", path, false, err, sizeof err) == FB_OK)
        return true;
    fb_error("trend: %s", err);
    return false;
}

int fb_trend_write(const char *out, const struct fb_trend_run *runs, size_t nruns,
                   const struct fb_trend_series *s, size_t ns, double threshold, bool no_plots)
{
    char path[4200], name[300], label[1200], gnuplot[4096];
    struct fb_atomic_file af;
    size_t degraded = 0, nsteps = 0;
    bool have_gnuplot = !no_plots && fb_gnuplot_find(gnuplot, sizeof gnuplot);

    /* every file checked first: nothing half-written, no verdict printed, for a folder in the
     * way of the last one */
    if (!target_ok(out, "trend.md") || !target_ok(out, "trend.csv"))
        return 1;
    for (size_t k = 0; k < ns && !no_plots; k++) {
        static const char *const ext[] = {"dat", "gp", "png", "svg"};
        for (size_t e = 0; e < sizeof ext / sizeof *ext; e++) {
            snprintf(name, sizeof name, "trend-%zu.%s", k, ext[e]);
            if (!target_ok(out, name))
                return 1;
        }
    }
    if (!no_plots && !have_gnuplot)
        fb_warn("trend: gnuplot not found on PATH: plots skipped");
    snprintf(path, sizeof path, "%s/trend.md", out);
    if (fb_atomic_open(&af, path) != FB_OK)
        return 1;
    fprintf(af.f, "# Trend over %zu runs\n\nRuns in order (time from %s); threshold %.3g%%; a "
                  "step needs %d runs on each side and a change beyond %.0fx the runs' pooled "
                  "spread (docs/trend.md).\n\n| run | folder | id | started |\n|---|---|---|---|\n",
            nruns, runs[0].time_from, threshold * 100, FB_TREND_MIN_SEGMENT,
            FB_TREND_SPREAD_FACTOR);
    for (size_t r = 0; r < nruns; r++) {
        fprintf(af.f, "| %zu | ", r + 1);
        fb_md_put_code(af.f, runs[r].dir, true);
        fputs(" | ", af.f);
        fb_md_put_code(af.f, runs[r].id, true);
        fprintf(af.f, " | %s |\n", runs[r].started[0] ? runs[r].started : "-");
    }
    for (size_t k = 0; k < ns; k++) {
        series_name(&s[k], name, sizeof name);
        fputs("\n## ", af.f);
        fb_md_put_text(af.f, name);
        fputs("\n\n", af.f);
        if (!s[k].nsteps)
            fprintf(af.f, "No step.\n");
        for (size_t j = 0; j < s[k].nsteps; j++) {
            const struct fb_trend_step *t = &s[k].steps[j];
            step_label(&runs[t->at - 1], &runs[t->at], label, sizeof label);
            nsteps++;
            fprintf(af.f, "- step at run %zu (", t->at + 1);
            fb_md_put_code(af.f, runs[t->at].dir, false);
            fprintf(af.f, "): %.4g -> %.4g ", t->before, t->after);
            fb_md_put_text(af.f, s[k].key.unit);
            fprintf(af.f, " (x%.3f, %s; the noise to beat was %.3g). Changed: ", t->ratio,
                    t->worse ? "**worse**" : "better or neutral", t->noise);
            fb_md_put_text(af.f, label);
            fputc('\n', af.f);
        }
        if (fb_trend_latest_degraded(&s[k]))
            degraded++;
        fprintf(af.f, "\n| run | median | p05 | p95 |\n|---|---|---|---|\n");
        for (size_t r = 0; r < nruns; r++)
            if (s[k].pt[r].present)
                fprintf(af.f, "| %zu | %.4g | %.4g | %.4g |\n", r + 1, s[k].pt[r].median,
                        s[k].pt[r].p05, s[k].pt[r].p95);
        if (!no_plots) {
            if (write_plot(out, k, &s[k], nruns, have_gnuplot ? gnuplot : NULL)) {
                fb_atomic_abort(&af);
                return 1;
            }
            if (have_gnuplot)
                fprintf(af.f, "\n![series %zu](trend-%zu.png)\n", k, k);
        }
    }
    fprintf(af.f, "\n**Verdict**: %zu step(s); the latest run (", nsteps);
    fb_md_put_code(af.f, runs[nruns - 1].dir, false);
    fprintf(af.f, ") sits past a worse step in %zu series.\n", degraded);
    if (fb_atomic_commit(&af) != FB_OK || write_csv(out, runs, nruns, s, ns))
        return 1;
    /* the verdict, once every file is written */
    fb_out("trend: %zu runs, %zu series, threshold %.3g%%, runs ordered by %s\n", nruns, ns,
           threshold * 100, runs[0].time_from);
    for (size_t k = 0; k < ns; k++) {
        series_name(&s[k], name, sizeof name);
        for (size_t j = 0; j < s[k].nsteps; j++) {
            /* the run folder's and the fingerprint's text: one visible line */
            const struct fb_trend_step *t = &s[k].steps[j];
            char en[512], ed[1024], el[2048];
            step_label(&runs[t->at - 1], &runs[t->at], label, sizeof label);
            fb_out("STEP %s: %.4g -> %.4g (x%.3f, %s) at run %zu (%s); changed: %s\n",
                   fb_escape_str(name, 0, en, sizeof en), t->before, t->after, t->ratio,
                   t->worse ? "worse" : "better or neutral", t->at + 1,
                   fb_escape_str(runs[t->at].dir, 0, ed, sizeof ed),
                   fb_escape_str(label, 0, el, sizeof el));
        }
    }
    {
        char ed[1024];
        fb_out("trend: %zu step(s); latest run %s: %s\n", nsteps,
               fb_escape_str(runs[nruns - 1].dir, 0, ed, sizeof ed),
               degraded ? "DEGRADED (past a worse step)" : "no worse step");
    }
    {
        char eo[4400]; /* --out as given: one visible line */
        fb_escape_str(out, 0, eo, sizeof eo);
        fb_out("trend: %s/trend.md, %s/trend.csv\n", eo, eo);
    }
    return 0;
}
