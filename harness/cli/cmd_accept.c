/* `fabricbench accept [--profile NAME|FILE] [--junit FILE] RUN_DIR`: a run folder judged against
 * a hardware profile, or without one against its own expected figures (docs/expected.md); a
 * table of verdicts, a summary, JUnit XML for CI. No MPI. Exit 0 when no check fails, 1 when
 * one does, 2 on bad input. */
#define _GNU_SOURCE
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accept.h"
#include "atomic_file.h"
#include "cli.h"
#include "commands.h"
#include "log.h"
#include "profile.h"
#include "profile_find.h"
#include "run_folder.h"

static void usage(void)
{
    printf("usage: fabricbench accept [--profile NAME|FILE] [--junit FILE] RUN_DIR\n"
           "Judges a run folder (results.csv, env.json, NCCL logs) against a hardware profile\n"
           "(an INI file; profiles/ ships some, docs/accept.md documents every key), and every\n"
           "figure with an expected value (results.csv's `expected`: what the run's own NICs and\n"
           "PCIe links allow, docs/expected.md) against 80%% of it ([expected] min_share).\n"
           "Figures are medians over a row's trials; a row with too few trials is SKIP.\n\n"
           "  --profile NAME|FILE  the hardware profile: a name (c4140-m) among the installed\n"
           "                  profiles (PREFIX/share/fabricbench/profiles), then in the folders\n"
           "                  of FB_PROFILE_PATH (colon-separated); or a path to an .ini file.\n"
           "                  Without it: the run's own expected figures alone\n"
           "  --junit FILE    also write the verdicts as JUnit XML (one testcase per check)\n"
           "  --help          this text\n\n"
           "exit status: 0 every check PASS or SKIP, 1 a check FAIL, 2 bad input\n");
}

static void print_table(const struct fb_accept *a, const struct fb_profile *p, const char *run)
{
    if (p->path[0])
        printf("accept: run %s against profile %s (%s)\n", run, p->name, p->path);
    else
        printf("accept: run %s against its expected figures (no profile)\n", run);
    if (p->description[0])
        printf("  %s\n", p->description);
    printf("\n%-28s %-5s %-22s %-28s %8s  %s\n", "check", "", "measured", "expected", "margin",
           "from / why");
    for (size_t i = 0; i < a->n; i++) {
        const struct fb_accept_check *k = &a->checks[i];
        char margin[24] = "-";
        if (!isnan(k->margin_pct))
            snprintf(margin, sizeof margin, "%+.1f%%", k->margin_pct);
        printf("%-28s %-5s %-22s %-28s %8s  %s\n", k->name, fb_verdict_str(k->verdict),
               k->measured, k->expected, margin, k->from[0] ? k->from : "-");
        if (k->why[0])
            printf("%-28s %-5s %s\n", "", "", k->why);
    }
    printf("\nsummary: %zu PASS, %zu FAIL, %zu SKIP of %zu checks: %s\n",
           fb_accept_count(a, FB_PASS), fb_accept_count(a, FB_FAIL), fb_accept_count(a, FB_SKIP),
           a->n, fb_accept_count(a, FB_FAIL) ? "NOT ACCEPTED" : "accepted");
}

static fb_status write_junit(const char *path, const struct fb_accept *a,
                             const struct fb_profile *p, const char *run)
{
    struct fb_atomic_file af;
    fb_status st;

    if ((st = fb_atomic_open(&af, path)) != FB_OK)
        return st;
    if (fb_accept_junit_write(af.f, a, p, run) != 0) {
        fb_error("accept: cannot write '%s'", path);
        fb_atomic_abort(&af);
        return FB_ERR_IO;
    }
    return fb_atomic_commit(&af);
}

int fb_cmd_accept(int argc, char **argv)
{
    static const struct option options[] = {
        {"profile", required_argument, NULL, 'p'},
        {"junit", required_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *profile_path = NULL, *junit = NULL, *run;
    char found[4096];
    struct fb_profile *p = NULL;
    struct fb_accept a = {0};
    char why[1024];
    int c, rc = 2;
    fb_status st;

    optind = 0; /* a full restart of getopt (see cli.c) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (c) {
        case 'p': profile_path = optarg; break;
        case 'j': junit = optarg; break;
        case 'h': usage(); return 0;
        default:
            fb_cli_option_error(c, argv, why, sizeof why);
            fb_error("accept: %s (see `fabricbench accept --help`)", why);
            return 2;
        }
    }
    if (optind != argc - 1) {
        fb_error("accept: give exactly one run folder (usage: fabricbench accept [--profile "
                 "NAME|FILE] [--junit FILE] RUN_DIR)");
        return 2;
    }
    run = argv[optind];
    /* checked before any work: the verdicts must not be lost to a bad --junit */
    if (junit && fb_run_folder_output("--junit", junit, false, why, sizeof why) != FB_OK) {
        fb_error("accept: %s", why);
        return 2;
    }
    if (!(p = malloc(sizeof *p))) {
        fb_error("accept: out of memory");
        return 2;
    }
    if (!profile_path) {
        /* no profile: the run's own expected figures, and the checks that need none */
        fb_profile_init(p);
        snprintf(p->name, sizeof p->name, "expected");
        snprintf(p->description, sizeof p->description,
                 "no profile: each figure against %.0f%% of what this run's hardware allows "
                 "(docs/expected.md)", p->expected_min_share * 100);
    } else if ((st = fb_profile_find(profile_path, NULL, getenv("FB_PROFILE_PATH"), found,
                                     sizeof found, why, sizeof why)) != FB_OK ||
               (st = fb_profile_load(found, p, why, sizeof why)) != FB_OK) {
        fb_error("accept: %s", why);
        goto out;
    }
    if ((st = fb_accept_run(p, run, &a, why, sizeof why)) != FB_OK) {
        fb_error("accept: %s", why);
        goto out;
    }
    print_table(&a, p, run);
    if (junit && write_junit(junit, &a, p, run) != FB_OK)
        goto out; /* the verdicts are on stdout; a CI that asked for XML must not see a pass */
    if (junit)
        printf("junit: %s\n", junit);
    rc = fb_accept_count(&a, FB_FAIL) ? 1 : 0;
out:
    fb_accept_release(&a);
    free(p);
    return rc;
}
