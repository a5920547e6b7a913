/* `fabricbench compare BASE NEW`: the fingerprint difference, then every joined row's verdict
 * on the terminal, and compare.csv, compare.md and overlaid gnuplot plots written atomically
 * into the output folder. No MPI. The rule itself lives in harness/analysis/compare.c, the
 * outputs in compare_out.c and compare_plots.c beside it; here: the usage, the two runs opened
 * and the order of work. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cli.h"
#include "commands.h"
#include "compare.h"
#include "compare_out.h"
#include "log.h"
#include "run_folder.h"
#include "run_state.h"
#include "units.h"

static void usage(void)
{
    printf("usage: fabricbench compare [--threshold PCT] [--out DIR] [--machines] BASE NEW\n"
           "Compares two runs: BASE and NEW are run folders (or their results.csv). Prints the\n"
           "verdict, the regressions largest first, the improvements, and the fingerprint\n"
           "differences that can explain them; writes every row joined on its keys, with the\n"
           "ratio of medians NEW/BASE and its verdict, to compare.csv and compare.md, and plots.\n"
           "A change is a REGRESSION only when it is worse by more than the threshold AND the\n"
           "two runs' [p05, p95] trial bands do not overlap (docs/compare.md).\n\n"
           "  --threshold PCT  smallest change that counts, in percent (default 5)\n"
           "  --out DIR        where to write (default ./compare-<BASE>-vs-<NEW>, the folders'\n"
           "                   names); never inside either run folder (a run is a record)\n"
           "  --machines       BASE and NEW are two machines: 'better'/'worse' wording, and\n"
           "                   exit 0 whichever is better\n"
           "  --help           this text\n\n"
           "exit: 0 no regression, 1 a regression (not with --machines) or an output error,\n"
           "2 bad usage or input (a missing run, a malformed results.csv)\n");
}

/* compare-<BASE>-vs-<NEW>, from the two run folders' last components (a run's own id when it
 * was made with the default name): bytes outside [A-Za-z0-9._-] as '_', so that no text becomes
 * a path (no '/', no "..": one component starting with "compare-"). */
static void last_component(const char *path, const char **at, int *n)
{
    size_t end = strlen(path);
    while (end > 1 && path[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    *at = path + start;
    *n = (int)(end - start < 60 ? end - start : 60);
}

static void safe_folder_name(char *dst, size_t len, const char *bdir, const char *ndir)
{
    const char *b, *n;
    int bn, nn;
    last_component(bdir, &b, &bn);
    last_component(ndir, &n, &nn);
    int w = snprintf(dst, len, "compare-%.*s-vs-%.*s", bn, b, nn, n);

    for (char *c = dst + 8; w > 0 && *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
              *c == '.' || *c == '_' || *c == '-'))
            *c = '_';
}

/* BASE or NEW: a folder holding results.csv, or a results.csv itself. */
static int side_open(struct fb_cmp_side *s, const char *arg)
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

int fb_cmd_compare(int argc, char **argv)
{
    static const struct option options[] = {
        {"threshold", required_argument, NULL, 't'},
        {"out", required_argument, NULL, 'o'},
        {"machines", no_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct fb_cmp_side *b = NULL, *n = NULL;
    struct fb_comparison cmp = {0};
    struct fb_fp_diff *diffs = NULL;
    size_t ndiffs = 0;
    double threshold = FB_COMPARE_THRESHOLD_DEFAULT;
    const char *out_arg = NULL, *fp_note = NULL;
    char why[160], why2[900], out[4300], path[4400], fperr[600], note[800];
    bool machines = false;
    int c, rc = 2;

    optind = 0; /* a full restart of getopt (see cli.c) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (c) {
        case 't': {
            double pct;
            if (fb_real_parse(optarg, 0, 1000, &pct, why, sizeof why) != FB_OK) {
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
        const struct fb_cmp_side *sd = k ? n : b;
        if (fb_run_state_incomplete_dir(sd->dir, why, sizeof why))
            fb_warn("compare: run '%s' is incomplete (%s); only its finished points are "
                    "compared", sd->id, why);
    }
    rc = 2;
    if (out_arg) {
        /* the user's own name: not empty, not a link (docs/run-folder.md) */
        if (fb_run_folder_output("--out", out_arg, true, why2, sizeof why2) != FB_OK) {
            fb_error("compare: %s", why2);
            goto out;
        }
        snprintf(out, sizeof out, "%s", out_arg);
    } else {
        /* named after both run folders: made one safe folder name in the current folder, which
         * must not be a link */
        char name[160];
        safe_folder_name(name, sizeof name, b->dir, n->dir);
        if (fb_run_folder_below(".", name, why2, sizeof why2) != FB_OK) {
            fb_error("compare: default output folder %s (give --out)", why2);
            goto out;
        }
        snprintf(out, sizeof out, "%s", name);
    }
    for (int k = 0; k < 2; k++)
        if (fb_run_folder_inside(out, (k ? n : b)->dir)) {
            fb_error("compare: output folder '%s' is inside run '%s'; a run folder is a record, "
                     "left as it was written (give --out elsewhere)", out, (k ? n : b)->id);
            goto out;
        }
    rc = 1;
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
    if (fb_compare_join(&b->res, &n->res, threshold, &cmp) != FB_OK) {
        fb_error("compare: out of memory");
        goto out;
    }
    fb_compare_print_glance(&cmp, machines, b->id, n->id, threshold, diffs, ndiffs, fp_note);

    snprintf(path, sizeof path, "%s/compare.csv", out);
    if (fb_compare_write_csv(path, &cmp, machines) != 0)
        goto out;
    snprintf(path, sizeof path, "%s/compare.md", out);
    if (fb_compare_write_md(path, out, b, n, &cmp, threshold, machines, diffs, ndiffs,
                            fp_note) != 0)
        goto out;
    fb_out("\nevery row and difference: %s/compare.md, compare.csv\n", out);
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
