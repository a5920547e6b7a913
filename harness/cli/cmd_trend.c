/* `fabricbench trend [--threshold PCT] [--out DIR] [--no-plots] RUN_DIR... | FOLDER`: regression
 * tracking over many runs. Every run folder is read and checked before anything is written; the
 * runs are put in time order (env.json's `started`, else the run id's time), each headline
 * metric becomes a series, its steps are found under a noise rule (harness/analysis/trend.c)
 * and written out (trend_out.c). Exit 0 no worse step at the latest run, 1 the latest run sits
 * past a worse step, 2 bad input. No MPI. */
#define _GNU_SOURCE /* strptime, timegm */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "atomic_file.h"
#include "cli.h"
#include "commands.h"
#include "headline.h"
#include "escape.h"
#include "log.h"
#include "report.h"
#include "run_folder.h"
#include "trend.h"
#include "trend_out.h"
#include "units.h"

enum { TREND_MAX_RUNS = 4096 };

static void usage(void)
{
    printf("usage: fabricbench trend [--threshold PCT] [--out DIR] [--no-plots] RUN_DIR...\n"
           "       fabricbench trend [options] FOLDER   (every run folder inside it)\n"
           "Regression tracking over many runs: each headline metric as a series in time order\n"
           "(env.json's `started`, else the run id's time), the steps where its level changed\n"
           "beyond both the threshold and the runs' own noise, each labelled with what changed\n"
           "in the fingerprint at that run (docs/trend.md).\n\n"
           "  --threshold PCT  smallest step that counts, in percent (default 5)\n"
           "  --out DIR        where trend.md, trend.csv and the plots go (default ./trend);\n"
           "                   never inside one of the runs\n"
           "  --no-plots       no gnuplot scripts or plots\n"
           "  --help           this text\n\n"
           "exit status: 0 the latest run is past no worse step, 1 it is (DEGRADED), 2 bad "
           "input\n");
}

/* Seconds since the epoch of a run: env.json's "started", else the run id's
 * YYYYmmdd-HHMMSS prefix; NAN when neither. A "started" that is there but is no such time is
 * bad input (*bad, one line said): falling back would order every run differently in silence. */
static double run_time(const struct fb_report_run *r, struct fb_trend_run *t, bool *bad)
{
    struct tm tm;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(r->env, "started");
    const char *end = NULL;
    memset(&tm, 0, sizeof tm);
    *bad = false;
    if (cJSON_IsString(s) && !s->valuestring[0])
        s = NULL; /* written empty when the clock could not be read: no time, not a bad one */
    if (s && !(cJSON_IsString(s) &&
               (end = strptime(s->valuestring, "%Y-%m-%dT%H:%M:%SZ", &tm)) && !*end)) {
        char shown[4200];
        fb_error("trend: %s/env.json: 'started' is not a time like 2026-12-07T22:09:43Z (UTC)",
                 fb_escape_str(r->dir, 0, shown, sizeof shown));
        *bad = true;
        return NAN;
    }
    if (s) {
        snprintf(t->started, sizeof t->started, "%s", s->valuestring);
        t->time_from = "env.json";
        return (double)timegm(&tm);
    }
    memset(&tm, 0, sizeof tm);
    if ((end = strptime(r->id, "%Y%m%d-%H%M%S", &tm)) && (!*end || *end == '-')) {
        /* a default run id is the local time of the run's host (results.c), taken as this
         * host's zone */
        tm.tm_isdst = -1;
        time_t t0 = mktime(&tm);
        struct tm utc;
        if (t0 != (time_t)-1 && gmtime_r(&t0, &utc)) {
            strftime(t->started, sizeof t->started, "%Y-%m-%dT%H:%M:%SZ", &utc);
            t->time_from = "run id";
            return (double)t0;
        }
    }
    t->time_from = "argument order";
    return NAN;
}

struct order { double t; size_t i; };

static int order_cmp(const void *a, const void *b)
{
    const struct order *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Whether out is one of the runs or inside one. */
static bool out_inside_a_run(const char *out, char (*dirs)[4096], size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fb_run_folder_inside(out, dirs[i]))
            return true;
    return false;
}

int fb_cmd_trend(int argc, char **argv)
{
    static const struct option options[] = {
        {"threshold", required_argument, NULL, 't'},
        {"out", required_argument, NULL, 'o'},
        {"no-plots", no_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    double threshold = FB_TREND_THRESHOLD_DEFAULT;
    const char *out = "trend";
    bool no_plots = false;
    char why[512], (*dirs)[4096] = NULL;
    struct fb_report_run *runs = NULL;
    struct fb_trend_run *tr = NULL;
    struct order *ord = NULL;
    const struct fb_row **hl = NULL;
    struct fb_row *hrows = NULL;
    size_t n = 0, *nhl = NULL, *idx = NULL, ns = 0, degraded = 0;
    struct fb_trend_series *s = NULL;
    int c, rc = 2;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (c) {
        case 't': {
            double pct;
            if (fb_real_parse(optarg, 0, 1000, &pct, why, sizeof why) != FB_OK || pct == 0) {
                fb_error("trend: bad value for --threshold: '%s' is not a percentage above 0 "
                         "and at most 1000", optarg);
                return 2;
            }
            threshold = pct / 100;
            break;
        }
        case 'o': out = optarg; break;
        case 'n': no_plots = true; break;
        case 'h': usage(); return 0;
        default:
            fb_cli_option_error(c, argv, why, sizeof why);
            fb_error("trend: %s", why);
            return 2;
        }
    }
    if (fb_run_folder_output("--out", out, true, why, sizeof why) != FB_OK) {
        fb_error("trend: %s", why);
        return 2;
    }
    if (optind == argc) {
        fb_error("trend: give run folders, or one folder that holds them (see `fabricbench "
                 "trend --help`)");
        return 2;
    }
    if (!(dirs = calloc(TREND_MAX_RUNS, sizeof *dirs)))
        goto nomem;
    if (argc - optind == 1 && !fb_run_folder_is_run(argv[optind])) {
        long found = fb_run_folder_runs_inside(argv[optind], dirs, TREND_MAX_RUNS, why,
                                               sizeof why);
        if (found < 0) {
            fb_error("trend: %s", why);
            goto out;
        }
        n = (size_t)found;
    } else {
        for (int i = optind; i < argc; i++) {
            if (n == TREND_MAX_RUNS || snprintf(dirs[n], sizeof dirs[n], "%s", argv[i]) >=
                                           (int)sizeof dirs[n]) {
                fb_error("trend: too many runs, or a path too long: '%.60s'", argv[i]);
                goto out;
            }
            n++;
        }
    }
    {
        const char **names = malloc((n ? n : 1) * sizeof *names);
        if (!names)
            goto nomem;
        for (size_t i = 0; i < n; i++)
            names[i] = dirs[i];
        fb_status dst = fb_run_folder_distinct(names, n, why, sizeof why);
        free(names);
        if (dst != FB_OK) {
            fb_error("trend: %s", why);
            goto out;
        }
    }
    if (!(runs = calloc(n + 1, sizeof *runs)) || !(tr = calloc(n + 1, sizeof *tr)) ||
        !(ord = calloc(n + 1, sizeof *ord)) || !(hl = calloc(n + 1, sizeof *hl)) ||
        !(nhl = calloc(n + 1, sizeof *nhl)))
        goto nomem;
    /* Every run read and checked before anything is written; a bad folder is named before
     * the count is judged */
    bool timed = true;
    for (size_t i = 0; i < n; i++) {
        if ((rc = fb_report_run_load(&runs[i], dirs[i], "trend")) != 0) {
            rc = rc == 1 ? 2 : rc;
            goto out;
        }
        bool bad;
        ord[i] = (struct order){run_time(&runs[i], &tr[i], &bad), i};
        if (bad) {
            rc = 2;
            goto out;
        }
        timed &= !isnan(ord[i].t);
    }
    if (n < 2 * FB_TREND_MIN_SEGMENT) {
        fb_error("trend: %zu run folder(s) found; a trend needs at least %d", n,
                 2 * FB_TREND_MIN_SEGMENT);
        rc = 2;
        goto out;
    }
    rc = 2;
    if (timed)
        qsort(ord, n, sizeof *ord, order_cmp);
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += runs[i].nrows;
    if (!(idx = malloc((total + 1) * sizeof *idx)) || !(hrows = malloc((total + 1) *
                                                                       sizeof *hrows)))
        goto nomem;
    size_t used = 0;
    for (size_t k = 0; k < n; k++) {
        struct fb_report_run *r = &runs[ord[k].i];
        struct fb_trend_run t = tr[ord[k].i];
        snprintf(t.dir, sizeof t.dir, "%s", r->dir);
        snprintf(t.id, sizeof t.id, "%s", r->id);
        if (!timed)
            t.time_from = "argument order";
        size_t m = 0;
        if (fb_headline_select(r->rows, r->nrows, idx, &m) != FB_OK)
            goto nomem;
        hl[k] = hrows + used;
        for (size_t j = 0; j < m; j++)
            hrows[used++] = r->rows[idx[j]];
        nhl[k] = m;
        tr[ord[k].i] = t;
    }
    /* tr in run order */
    struct fb_trend_run *inorder = calloc(n, sizeof *inorder);
    if (!inorder)
        goto nomem;
    for (size_t k = 0; k < n; k++)
        inorder[k] = tr[ord[k].i];
    free(tr);
    tr = inorder;
    if (fb_trend_build(hl, nhl, n, threshold, &s, &ns) != FB_OK)
        goto nomem;
    if (out_inside_a_run(out, dirs, n)) {
        fb_error("trend: --out '%s' is inside a run folder; a run folder is a record, left as it "
                 "was written", out);
        goto out;
    }
    if (fb_mkdirs(out) != 0) {
        fb_error("trend: cannot make --out folder '%s': %s", out, strerror(errno));
        goto out;
    }
    if (fb_trend_write(out, tr, n, s, ns, threshold, no_plots)) {
        rc = 2;
        goto out;
    }
    for (size_t k = 0; k < ns; k++)
        degraded += fb_trend_latest_degraded(&s[k]);
    rc = degraded ? 1 : 0;
    goto out;
nomem:
    fb_error("trend: out of memory");
    rc = 2;
out:
    for (size_t i = 0; runs && i < n; i++)
        fb_report_run_release(&runs[i]);
    fb_trend_release(s, ns);
    free(runs);
    free(tr);
    free(ord);
    free(hl);
    free(nhl);
    free(idx);
    free(hrows);
    free(dirs);
    return rc;
}
