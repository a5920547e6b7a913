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
#include "file_name.h"
#include "log.h"
#include "run_folder.h"
#include "run_state.h"
#include "units.h"

static void usage(void)
{
    printf("usage: fabricbench compare [--threshold PCT] [--out DIR] [--machines] BASE NEW\n"
           "       fabricbench compare [options] BASE... -- NEW...\n"
           "Compares two runs: BASE and NEW are run folders (or their results.csv), or folders\n"
           "of run folders; with --, several runs a side. Prints the verdict, the regressions\n"
           "largest first, the improvements, and the fingerprint differences that can explain\n"
           "them; writes every row joined on its keys, with the ratio of medians NEW/BASE and\n"
           "its verdict, to compare.csv and compare.md, and plots.\n"
           "A change is a REGRESSION only when it is worse by more than the threshold AND\n"
           "beyond the noise: with one run a side, the two runs' [p05, p95] trial bands do not\n"
           "overlap; with several, Welch's t of the runs' medians passes the 1%% level, and\n"
           "the screen says how many runs a side a change of the threshold needs\n"
           "(docs/compare.md). One run a side cannot see the noise between runs.\n\n"
           "  --threshold PCT  smallest change that counts, in percent (default 5)\n"
           "  --out DIR        where to write (default ./compare-<BASE>-vs-<NEW>, the first\n"
           "                   folders' names); never inside a run folder (a run is a record)\n"
           "  --machines       BASE and NEW are two machines: 'better'/'worse' wording, and\n"
           "                   exit 0 whichever is better\n"
           "  --help           this text\n\n"
           "exit: 0 no regression, 1 a regression (not with --machines) or an output error,\n"
           "2 bad usage or input (a missing run, a malformed results.csv)\n");
}

/* compare-<BASE>-vs-<NEW>, from the last component of each side's folder (a run folder, or the
 * folder of runs given; a run's own id when it was made with the default name), the last two
 * where those are the same (`a/r1` and `b/r1`: a_r1 and b_r1): bytes outside [A-Za-z0-9._-]
 * as '_', so that no text becomes a path (no '/', no "..": one component starting with
 * "compare-"). */
static void last_components(const char *path, int count, const char **at, int *n)
{
    size_t end = strlen(path);
    while (end > 1 && path[end - 1] == '/')
        end--;
    size_t start = end;
    for (int k = 0; k < count && start > 0; k++) {
        while (k && start > 0 && path[start - 1] == '/') /* the separator before the last */
            start--;
        while (start > 0 && path[start - 1] != '/')
            start--;
    }
    while (start < end && path[start] == '/')
        start++;
    *at = path + start;
    *n = (int)(end - start < 60 ? end - start : 60);
}

static void safe_folder_name(char *dst, size_t len, const char *bdir, const char *ndir)
{
    const char *b, *n;
    int bn, nn;
    last_components(bdir, 1, &b, &bn);
    last_components(ndir, 1, &n, &nn);
    if (bn == nn && memcmp(b, n, (size_t)bn) == 0) {
        last_components(bdir, 2, &b, &bn);
        last_components(ndir, 2, &n, &nn);
    }
    int w = snprintf(dst, len, "compare-%.*s-vs-%.*s", bn, b, nn, n);

    if (w > 0)
        fb_file_name_safe(dst + 8, "._-");
}

/* BASE or NEW: a folder holding results.csv, or a results.csv itself. */
static int side_open(struct fb_cmp_side *s, const char *arg)
{
    struct stat sb;
    char err[600];
    const char *slash;
    fb_status st;

    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", arg);
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

/* The most runs a side may have. */
#define FB_COMPARE_MAX_RUNS 256

/* One side of the comparison: its runs, each opened; with several, their rows pooled. */
struct side {
    struct fb_cmp_side *run;
    size_t n;
    const char *folder; /* the side's first argument where it is a folder of runs; else NULL */
    struct fb_read_results pooled;
    char label[640];
};

static int side_add_one(struct side *sd, const char *arg)
{
    struct fb_cmp_side *r;
    int rc;

    if (sd->n == FB_COMPARE_MAX_RUNS) {
        fb_error("compare: more than %d runs on a side (at '%s')", FB_COMPARE_MAX_RUNS, arg);
        return 2;
    }
    r = realloc(sd->run, (sd->n + 1) * sizeof *sd->run);
    if (!r) {
        fb_error("compare: out of memory");
        return 1;
    }
    sd->run = r;
    if ((rc = side_open(&sd->run[sd->n], arg)) != 0)
        return rc;
    sd->n++;
    return 0;
}

/* A run folder, a results.csv, or a folder of run folders (each subfolder holding a
 * results.csv, in name order: fb_run_folder_runs_inside, as trend reads one). */
static int side_add(struct side *sd, const char *arg)
{
    char (*list)[4096], csv[4500], err[600];
    struct stat sb;
    long k;
    int rc = 0;

    snprintf(csv, sizeof csv, "%s/results.csv", arg);
    if (stat(arg, &sb) != 0 || !S_ISDIR(sb.st_mode) || access(csv, F_OK) == 0 || errno != ENOENT)
        return side_add_one(sd, arg);
    if (!(list = calloc(FB_COMPARE_MAX_RUNS + 1, sizeof *list))) {
        fb_error("compare: out of memory");
        return 1;
    }
    k = fb_run_folder_runs_inside(arg, list, FB_COMPARE_MAX_RUNS + 1, err, sizeof err);
    if (k < 0) {
        fb_error("compare: %s", err); /* unreadable, or more runs than a side may have */
        rc = 2;
    } else if (k == 0) {
        fb_error("compare: '%s' holds no results.csv and no run folder with one", arg);
        rc = 2;
    }
    if (rc == 0 && sd->n == 0)
        sd->folder = arg;
    for (long i = 0; i < k && rc == 0; i++)
        rc = side_add_one(sd, list[i]);
    free(list);
    return rc;
}

/* "NAME" for one run (the folder as given, without trailing slashes), "N runs: A, B, ..." for
 * several (cut short with "..."). */
static void side_label(struct side *sd)
{
    size_t used = 0, len = sizeof sd->label;
    int w;

    if (sd->n > 1) {
        w = snprintf(sd->label, len, "%zu runs: ", sd->n);
        used = w > 0 ? (size_t)w : 0;
    }
    for (size_t i = 0; i < sd->n && used + 4 < len; i++) {
        const char *name = sd->run[i].name;
        size_t nl = strlen(name);
        while (nl > 1 && name[nl - 1] == '/')
            nl--;
        w = snprintf(sd->label + used, len - used, "%s%.*s", i ? ", " : "", (int)nl, name);
        if (w < 0 || (size_t)w >= len - used) {
            snprintf(sd->label + len - 4, 4, "...");
            break;
        }
        used += (size_t)w;
    }
}

static void side_release(struct side *sd)
{
    for (size_t i = 0; i < sd->n; i++)
        fb_results_read_release(&sd->run[i].res);
    free(sd->run);
    fb_results_read_release(&sd->pooled);
}

/* The runs' rows pooled into sd->pooled. */
static fb_status side_pool(struct side *sd)
{
    struct fb_read_results *r = calloc(sd->n + 1, sizeof *r);
    fb_status st;

    if (!r)
        return FB_ERR_NOMEM;
    for (size_t i = 0; i < sd->n; i++)
        r[i] = sd->run[i].res; /* shallow: the pool copies what it keeps */
    st = fb_compare_pool(r, sd->n, &sd->pooled);
    free(r);
    return st;
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
    struct side b = {0}, n = {0};
    struct fb_comparison cmp = {0};
    struct fb_fp_diff *diffs = NULL;
    size_t ndiffs = 0;
    double threshold = FB_COMPARE_THRESHOLD_DEFAULT;
    const char *out_arg = NULL, *fp_note = NULL;
    char why[160], why2[900], out[4300], path[4400], fperr[600], note[800];
    bool machines = false, runs;
    int c, rc = 2, split = argc;

    /* BASE... -- NEW...: the options come from what stands before "--" */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            split = i;
            break;
        }
    optind = 0; /* a full restart of getopt (see cli.c) */
    opterr = 0;
    while ((c = getopt_long(split, argv, ":", options, NULL)) != -1) {
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
    if (split == argc && argc - optind != 2) {
        fb_error("compare: expected two runs, BASE and NEW, or BASE... -- NEW... (see "
                 "`fabricbench compare --help`)");
        return 2;
    }
    if (split < argc && (split - optind < 1 || argc - split - 1 < 1)) {
        fb_error("compare: expected at least one run on each side of '--' (BASE... -- NEW...)");
        return 2;
    }
    int b_end = split == argc ? optind + 1 : split, n_at = split == argc ? optind + 1 : split + 1;
    for (int i = optind; i < b_end; i++)
        if ((rc = side_add(&b, argv[i])) != 0)
            goto out;
    for (int i = n_at; i < argc; i++)
        if ((rc = side_add(&n, argv[i])) != 0)
            goto out;
    /* each run counts once on its side (the same run on both sides is an A/A comparison) */
    for (int k = 0; k < 2; k++) {
        const struct side *sd = k ? &n : &b;
        const char **names = malloc(sd->n * sizeof *names);
        fb_status dst;

        if (!names) {
            fb_error("compare: out of memory");
            rc = 1;
            goto out;
        }
        for (size_t i = 0; i < sd->n; i++)
            names[i] = sd->run[i].name;
        dst = fb_run_folder_distinct(names, sd->n, why2, sizeof why2);
        free(names);
        if (dst != FB_OK) {
            fb_error("compare: %s side: %s", k ? "new" : "base", why2);
            rc = 2;
            goto out;
        }
    }
    side_label(&b);
    side_label(&n);
    /* An incomplete run is compared on the points it finished: said, not refused. */
    for (int k = 0; k < 2; k++) {
        const struct side *sd = k ? &n : &b;
        for (size_t i = 0; i < sd->n; i++) {
            char why[1200];
            if (fb_run_state_incomplete_dir(sd->run[i].dir, why, sizeof why))
                fb_warn("compare: run '%s' is incomplete (%s); only its finished points are "
                        "compared", sd->run[i].id, why);
        }
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
        /* named after both sides' folders (safe_folder_name): one safe folder name in the
         * current folder, which must not be a link */
        char name[160];
        safe_folder_name(name, sizeof name, b.folder ? b.folder : b.run[0].dir,
                         n.folder ? n.folder : n.run[0].dir);
        if (fb_run_folder_below(".", name, why2, sizeof why2) != FB_OK) {
            fb_error("compare: default output folder %s (give --out)", why2);
            goto out;
        }
        snprintf(out, sizeof out, "%s", name);
    }
    for (int k = 0; k < 2; k++) {
        const struct side *sd = k ? &n : &b;
        for (size_t i = 0; i < sd->n; i++)
            if (fb_run_folder_inside(out, sd->run[i].dir)) {
                fb_error("compare: output folder '%s' is inside run '%s'; a run folder is a "
                         "record, left as it was written (give --out elsewhere)",
                         out, sd->run[i].id);
                goto out;
            }
    }
    rc = 1;
    runs = b.n > 1 || n.n > 1;
    if (runs && (side_pool(&b) != FB_OK || side_pool(&n) != FB_OK)) {
        fb_error("compare: out of memory");
        goto out;
    }
    if (fb_mkdirs(out) != 0) {
        fb_error("compare: cannot create '%s': %s", out, strerror(errno));
        rc = 2;
        goto out;
    }

    /* The fingerprint first: what changed is the likely cause of what follows (between the
     * first run of each side). */
    const struct fb_cmp_side *b0 = &b.run[0], *n0 = &n.run[0];
    if (!b0->has_env || !n0->has_env) {
        /* a note cut short still says which file */
        if (snprintf(note, sizeof note, "No fingerprint difference: '%s' cannot be read.",
                     !b0->has_env ? b0->env : n0->env) < 0)
            note[0] = '\0';
        fp_note = note;
    } else if (fb_compare_fingerprints(b0->env, n0->env, &diffs, &ndiffs, fperr,
                                       sizeof fperr) != FB_OK) {
        snprintf(note, sizeof note, "No fingerprint difference: %s", fperr);
        fp_note = note;
    }
    if ((runs ? fb_compare_join_runs(&b.pooled, &n.pooled, threshold, &cmp)
              : fb_compare_join(&b0->res, &n0->res, threshold, &cmp)) != FB_OK) {
        fb_error("compare: out of memory");
        goto out;
    }
    fb_compare_print_glance(&cmp, machines, b.label, n.label, threshold, diffs, ndiffs, fp_note);

    snprintf(path, sizeof path, "%s/compare.csv", out);
    if (fb_compare_write_csv(path, &cmp, machines) != 0)
        goto out;
    snprintf(path, sizeof path, "%s/compare.md", out);
    struct fb_cmp_set bs = {b.run, b.n, b.label}, ns = {n.run, n.n, n.label};
    if (fb_compare_write_md(path, out, &bs, &ns, &cmp, threshold, machines, diffs, ndiffs,
                            fp_note) != 0)
        goto out;
    fb_out("\nevery row and difference: %s/compare.md, compare.csv\n", out);
    rc = (!machines && cmp.count[FB_CMP_REGRESSION]) ? 1 : 0;
out:
    fb_compare_release(&cmp);
    free(diffs);
    side_release(&b);
    side_release(&n);
    return rc;
}
