/* `report` reading a run folder whole before anything is written: results.csv (the rows' detail
 * flags inferred, the plots' data computed), env.json, doctor.json and NCCL's logs; and a
 * sweep's launches.csv with each launch's run folder. */
#define _GNU_SOURCE
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "csv_table.h"
#include "escape.h"
#include "headline.h"
#include "json_file.h"
#include "log.h"
#include "run_folder.h"
#include "run_state.h"

/* 0 read (or optional and absent), 1 out of memory, 2 bad input (one line printed). */
static int read_json(const char *who, const char *path, cJSON **out, bool optional)
{
    char err[600];
    fb_status st = fb_json_file_read(path, optional, out, err, sizeof err);

    if (st != FB_OK)
        fb_error("%s: %s", who, err);
    return st == FB_OK ? 0 : st == FB_ERR_NOMEM ? 1 : 2;
}

int fb_report_run_load(struct fb_report_run *r, const char *dir, const char *who)
{
    char path[4200], err[700];
    struct stat sb;
    fb_status st;
    int rc;

    if (snprintf(r->dir, sizeof r->dir, "%s", dir) >= (int)sizeof r->dir) {
        fb_error("%s: path too long: '%.60s...'", who, dir);
        return 2;
    }
    if ((rc = stat(dir, &sb)) != 0 || !S_ISDIR(sb.st_mode)) {
        fb_error("%s: cannot open run folder '%s': %s", who, dir,
                 rc != 0 ? strerror(errno) : "not a folder");
        return 2;
    }
    snprintf(path, sizeof path, "%s/results.csv", dir);
    st = fb_results_read(path, &r->res, err, sizeof err);
    if (st != FB_OK) {
        fb_error("%s: %s", who, err);
        return st == FB_ERR_NOMEM ? 1 : 2;
    }
    snprintf(path, sizeof path, "%s/env.json", dir);
    if ((rc = read_json(who, path, &r->env, false)) != 0)
        return rc;
    {
        char why[1200], shown[1300];
        if (r->env && fb_run_state_incomplete(r->env, why, sizeof why))
            fb_warn("%s: run folder '%s' is incomplete (%s); %s its finished points only", who,
                    dir, fb_escape_str(why, 0, shown, sizeof shown),
                    strcmp(who, "report") == 0 ? "the plots and summary.md show"
                                               : "its series hold"); /* trend's */
    }
    snprintf(path, sizeof path, "%s/doctor.json", dir);
    if ((rc = read_json(who, path, &r->doctor, true)) != 0)
        return rc;
    st = fb_nccl_report_dir(dir, &r->nccl, err, sizeof err);
    if (st == FB_OK)
        r->have_nccl = r->nccl.nccl_lines > 0;
    else if (st != FB_ERR_UNSUPPORTED) {
        fb_error("%s: %s", who, err);
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
        fb_error("%s: out of memory", who);
        return 1;
    }
    for (size_t i = 0; i < r->res.nrows; i++)
        r->rows[i] = r->res.rows[i].row;
    r->nrows = r->res.nrows;
    if (fb_headline_infer_detail(r->rows, r->nrows) != FB_OK ||
        fb_report_plots(r->rows, r->nrows, &r->plots) != FB_OK ||
        !(r->state = calloc(r->plots.n + 1, sizeof *r->state))) {
        fb_error("%s: out of memory", who);
        return 1;
    }
    r->present = true;
    return 0;
}

void fb_report_run_release(struct fb_report_run *r)
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

int fb_report_launches_load(const char *top, const char *path, struct fb_report_launch **out,
                            size_t *n)
{
    struct fb_csv_table t;
    char err[700];
    fb_status st = fb_csv_table_read(path, FB_FILE_LAUNCHES_CSV, &t, err, sizeof err);
    struct fb_report_launch *l = NULL;
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
        struct fb_report_launch *x = &l[i - 1];
        const char *variant = fb_csv_table_get(&t, i, "variant");
        const char *dir = fb_csv_table_get(&t, i, "run_dir");
        const char *status = fb_csv_table_get(&t, i, "exit_status");
        char folder[4096], csv[4200], why[600];
        struct stat sb;

        x->line = t.line[i];
        if (!variant[0] || strchr(variant, '/') || strcmp(variant, "..") == 0 ||
            strcmp(variant, ".") == 0) {
            char shown[200];
            fb_error("report: %s:%zu: variant '%s' is not a folder name", path, x->line,
                     fb_escape_str(variant, 60, shown, sizeof shown));
            rc = 2;
            goto out;
        }
        /* report writes plots and summary.md there: the folder must lie below the sweep's
         * (docs/run-folder.md), not wherever the file's text points */
        if (fb_run_folder_below(top, dir && dir[0] ? dir : variant, why, sizeof why) != FB_OK) {
            fb_error("report: %s:%zu: run_dir %s", path, x->line, why);
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
        /* A launch that failed, or never ended (no exit status: the sweep was killed during
         * it), may have left no run: said in the summary, not an error. */
        snprintf(csv, sizeof csv, "%s/results.csv", folder);
        if (stat(csv, &sb) != 0 && status && strcmp(status, "0") != 0)
            continue;
        if ((rc = fb_report_run_load(&x->run, folder, "report")) != 0) {
            char shown[200];
            fb_error("report: (launch '%s' of %s:%zu)", fb_escape_str(variant, 60, shown,
                                                                      sizeof shown),
                     path, x->line);
            goto out;
        }
    }
    *out = l;
    *n = t.nrows;
    l = NULL;
out:
    if (l) {
        for (size_t i = 0; i < t.nrows; i++)
            fb_report_run_release(&l[i].run);
        free(l);
    }
    fb_csv_table_release(&t);
    return rc;
}
