/* `fabricbench locate`: its options; the phases, the judgement and the outputs are the fleet
 * layer's (harness/fleet/locate_run.h), which this command orders. */
#define _POSIX_C_SOURCE 200809L
#include "expect_job.h"
#include "locate_run.h"

#include <getopt.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "log.h"
#include "units.h"

enum { OPT_OUT = 256, OPT_TOL, OPT_TIMEOUT, OPT_BACKEND, OPT_COLL, OPT_BYTES, OPT_TRIALS,
       OPT_QUIET, OPT_COMPUTE };
enum { DEFAULT_TOLERANCE = 25 };

static const struct option locate_options[] = {
    {"out", required_argument, NULL, OPT_OUT},
    {"tolerance", required_argument, NULL, OPT_TOL},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"coll", required_argument, NULL, OPT_COLL},
    {"bytes", required_argument, NULL, OPT_BYTES},
    {"trials", required_argument, NULL, OPT_TRIALS},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"compute", required_argument, NULL, OPT_COMPUTE},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static const char *const locate_backends[] = {"auto", "host", "host-strict", "cuda", NULL};
static const char *const locate_colls[] = {"auto", "mpi", "nccl", NULL};
static const char *const locate_onoff[] = {"on", "off", NULL};

static void usage(void)
{
    printf("usage: mpirun -np N fabricbench locate [--out DIR] [--tolerance PCT] [--timeout S]\n"
           "         [--backend auto|host|host-strict|cuda] [--coll auto|mpi|nccl]\n"
           "         [--bytes SIZE]"
 " [--trials N] [--compute on|off] [--quiet]\n\n"
           "Names the slow node, link or rank of this job (docs/locate.md). Launch it like\n"
           "`run`: one rank per GPU, or per core on the host backend.\n"
           "  phase 1: every node alone, at once: h2d, p2p and all-reduce inside the node,\n"
           "           and the compute stand-in (compute's training step) on every rank\n"
           "  phase 2: a round-robin tournament of disjoint node pairs, both ways, each\n"
           "           round's pairs at once (n-1 rounds, n with a bye when n is odd; above\n"
           "           64 nodes a sample of 16 rounds), then retests of each suspect alone\n"
           "           and against two healthy partners, and each rank's compute-free loop\n\n"
           "options:\n"
           "  --out DIR          the run folder (default results/<YYYYmmdd-HHMMSS>-<host>)\n"
           "  --tolerance PCT    how far below the typical value (the median of comparable\n"
           "                     measurements) a measurement is suspect, 1 to 90 (default %d);\n"
           "                     it must also be 3 scaled MADs away\n"
           "  --timeout SECONDS  limit of every phase; a node that hangs is named, exit 3\n"
           "                     (default 300; 0 = none)\n"
           "  --backend auto|host|host-strict|cuda\n"
           "                     device backend (default auto)\n"
           "  --coll auto|mpi|nccl  collectives (default auto)\n"
           "  --bytes SIZE       message size of every transfer (default 4M)\n"
           "  --trials N         timed trials per point, 3 to 1000 (default 5)\n"
           "  --compute on|off   phase 1's compute stand-in (default on); off where the\n"
           "                     nodes share CPUs (pretend nodes, containers on one host)\n"
           "  --quiet            no progress lines\n"
           "  --help             this text\n\n"
           "writes suspects.csv, locate.md, locate-heat.png/.svg, results.csv, env.json.\n"
           "exit code: 0 no suspect, 1 suspects named, 2 bad input, 3 timed out,\n"
           "4 interrupted.\n",
           DEFAULT_TOLERANCE);
}

/* Parses the options into l; on bad input one line in err and false. */
static bool parse(int argc, char **argv, struct loc *l, bool *help, char *err, size_t errlen)
{
    char why[200];
    double real;
    long count;
    int c;

    fb_options_defaults(&l->opt);
    l->opt.trials = 5;
    l->opt.warmup = 2;
    /* trials of about 30 ms: a round's figure is then a mean over many transfers (at 5 ms, the
     * runner's default, one oversubscribed transfer of a few ms made a trial) */
    l->opt.trial_ms = 30.0;
    l->opt.telemetry_ms = 0;
    l->opt.timeout_s = fb_options_timeout_default(l->opt.trial_ms);
    l->opt.results_root = "results";
    l->tolerance = DEFAULT_TOLERANCE;
    optind = 0; /* a full restart of getopt (see cli.c) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", locate_options, NULL)) != -1) {
        switch (c) {
        case OPT_OUT:
            if (!*optarg) {
                snprintf(err, errlen, "bad value for --out: an empty path");
                return false;
            }
            l->opt.out_dir = optarg;
            break;
        case OPT_TOL:
            if (fb_real_parse(optarg, 1.0, 90.0, &real, why, sizeof why) != FB_OK) {
                snprintf(err, errlen, "bad value for --tolerance: %s", why);
                return false;
            }
            l->tolerance = real;
            break;
        case OPT_TIMEOUT:
            if (fb_cli_timeout_parse(optarg, &l->opt.timeout_s, why, sizeof why) != FB_OK) {
                snprintf(err, errlen, "bad value for --timeout: %s", why);
                return false;
            }
            break;
        case OPT_BACKEND:
        case OPT_COLL:
            if (fb_cli_choice(optarg, c == OPT_BACKEND ? locate_backends : locate_colls, why,
                              sizeof why) != FB_OK) {
                snprintf(err, errlen, "bad value for --%s: %s",
                         c == OPT_BACKEND ? "backend" : "coll", why);
                return false;
            }
            snprintf(c == OPT_BACKEND ? l->opt.backend : l->opt.coll, sizeof l->opt.coll, "%s",
                     optarg);
            break;
        case OPT_BYTES:
            /* why is the parser's only when it failed (a size of 0 parsed, then printed an
             * uninitialised buffer) */
            if (fb_size_parse(optarg, &l->opt.matrix_bytes, why, sizeof why) != FB_OK) {
                snprintf(err, errlen, "bad value for --bytes: %s", why);
                return false;
            }
            if (l->opt.matrix_bytes < 64 || l->opt.matrix_bytes > (size_t)INT32_MAX) {
                snprintf(err, errlen, "bad value for --bytes: '%.40s' is %zu bytes; give 64 "
                         "bytes to 2147483647 bytes", optarg, l->opt.matrix_bytes);
                return false;
            }
            break;
        case OPT_TRIALS:
            if (fb_count_parse(optarg, 3, 1000, &count, why, sizeof why) != FB_OK) {
                snprintf(err, errlen, "bad value for --trials: %s", why);
                return false;
            }
            l->opt.trials = count;
            break;
        case OPT_QUIET: l->opt.quiet = true; break;
        case OPT_COMPUTE:
            if (fb_cli_choice(optarg, locate_onoff, why, sizeof why) != FB_OK) {
                snprintf(err, errlen, "bad value for --compute: %s", why);
                return false;
            }
            l->no_compute = strcmp(optarg, "off") == 0;
            break;
        case 'h': *help = true; return true;
        default: fb_cli_option_error(c, argv, err, errlen); return false;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s' (locate takes options only)",
                 argv[optind]);
        return false;
    }
    return true;
}

int fb_cmd_locate(int argc, char **argv)
{
    struct loc *l = calloc(1, sizeof *l);
    char err[512];
    bool help = false;
    int rc, provided;

    if (!l)
        return 1;
    bool parsed = parse(argc, argv, l, &help, err, sizeof err);
    if ((rc = fb_cli_answer_early("locate", parsed, help, err, usage)) >= 0) {
        free(l);
        return rc;
    }
    fb_log_set_quiet(l->opt.quiet);
    /* MPI_THREAD_MULTIPLE: at a timeout every rank's watchdog tells rank 0 where it is, so a
     * node that hangs in the tournament is named (fb_watchdog_share_view); below it, as run */
    fb_world_start(&argc, &argv, "locate", l->opt.timeout_s, MPI_THREAD_MULTIPLE, &provided);
    /* the expected-figure model's site files, read (and refused) before anything is made */
    rc = fb_expect_job_site(fb_cli_rank_hint() == 0) != FB_OK
             ? fb_status_exit_code(FB_ERR_USAGE)
             : fb_locate_main(l);
    rc = fb_world_finish(rc);
    fb_locate_free(l);
    return rc;
}
