/* `fabricbench report [--no-plots] RUN_DIR`: a run folder (or a sweep's folder of launches)
 * turned into plots (gnuplot: PNG and SVG, each with its .gp script and .dat data in
 * RUN/plots) and RUN/summary.md. No MPI. Every input is read and checked before anything is
 * written; each file is written atomically. This file holds the options and the order of work;
 * the work is harness/report/report.h's (reading, plots, summary.md) and the plots' data
 * come from harness/report/report_data.c. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "gnuplot.h"
#include "log.h"
#include "report.h"

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

/* Plots then summary.md of one run; counts what was drawn. */
static int report_run(struct fb_report_run *r, bool no_plots, const char *gnuplot, size_t *drawn)
{
    int rc = 0;

    if (!no_plots)
        rc = fb_report_run_plots(r, gnuplot);
    if (!rc)
        rc = fb_report_write_summary(r, no_plots, !gnuplot);
    for (size_t i = 0; i < r->plots.n; i++)
        *drawn += r->state[i] == FB_PLOT_DRAWN;
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
    struct fb_report_run *one = NULL;
    struct fb_report_launch *l = NULL;
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
        if ((rc = fb_report_launches_load(top, launches, &l, &nl)) != 0)
            goto out;
    } else {
        if (!(one = calloc(1, sizeof *one))) {
            fb_error("report: out of memory");
            rc = 1;
            goto out;
        }
        if ((rc = fb_report_run_load(one, top, "report")) != 0)
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
        if (fb_report_write_sweep_summary(top, l, nl, no_plots, !gnuplot))
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
        fb_report_run_release(one);
    free(one);
    for (size_t i = 0; i < nl; i++)
        fb_report_run_release(&l[i].run);
    free(l);
    return rc;
}
