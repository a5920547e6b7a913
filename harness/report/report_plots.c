/* `report`'s plots on disk: each plot's .dat and .gp script written atomically into RUN/plots,
 * and drawn by gnuplot (when found) into PNG and SVG under temporary names, renamed when it has
 * finished. The data come from report_data.c, the scripts' bodies from plot_templates.c. */
#define _GNU_SOURCE
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "gnuplot.h"
#include "gp_text.h"
#include "log.h"
#include "plot_templates.h"

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

int fb_report_run_plots(struct fb_report_run *r, const char *gnuplot)
{
    char plots[4200], path[4400], from[4400], head[1200], id[4 * 128], setup[256], err[4500];
    const char *common = fb_plot_template_find("common");
    struct stat sb = {0};

    if (!r->plots.n)
        return 0;
    /* the run id comes from results.csv: one line of comment, whatever it holds */
    fb_gp_comment(id, sizeof id, r->id);
    snprintf(plots, sizeof plots, "%s/plots", r->dir);
    if (fb_mkdirs(plots) != 0) {
        fb_error("report: cannot create '%s': %s", plots, strerror(errno));
        return 1;
    }
    /* the run folder is untrusted: a `plots` that is a link would carry every file below
     * somewhere else */
    if (lstat(plots, &sb) != 0) {
        fb_error("report: cannot read '%s': %s", plots, strerror(errno));
        return 1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        const char *what = S_ISLNK(sb.st_mode)   ? "a link"
                           : S_ISREG(sb.st_mode) ? "a file"
                                                 : "a special file";
        fb_error("report: '%s' is %s, not a folder: no plot is written through it", plots, what);
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
                 p->name, id, p->template, p->name, p->name, p->name, p->name);
        snprintf(path, sizeof path, "%s/%s.gp", plots, p->name);
        if (write_text(path, head, p->vars, common, tmpl))
            return 1;
        if (!gnuplot) {
            r->state[i] = FB_PLOT_SKIPPED;
            continue;
        }
        snprintf(from, sizeof from, ".%s.tmp", p->name);
        memcpy(setup, "out = ", 6);
        fb_gp_string(setup + 6, sizeof setup - 6, from); /* a plot's name: 47 bytes at most */
        snprintf(path, sizeof path, "%s.gp", p->name);
        r->state[i] = FB_PLOT_DRAWN;
        if (fb_gnuplot_run(gnuplot, plots, setup, path, err, sizeof err) != FB_OK) {
            fb_warn("report: %s: plot '%s' not drawn", err, p->name);
            r->state[i] = FB_PLOT_FAILED;
        }
        for (int k = 0; k < 2; k++) {
            const char *ext = k ? "svg" : "png";
            snprintf(from, sizeof from, "%s/.%s.tmp.%s", plots, p->name, ext);
            snprintf(path, sizeof path, "%s/%s.%s", plots, p->name, ext);
            if (r->state[i] == FB_PLOT_DRAWN && rename(from, path) != 0) {
                fb_warn("report: gnuplot made no '%s': plot '%s' not drawn", from, p->name);
                r->state[i] = FB_PLOT_FAILED;
            }
            unlink(from);
        }
    }
    return 0;
}
