/* `fabricbench soak`: its options and --help; the soak itself (its intervals, verdicts and
 * health counters) is the fleet layer's (fleet/soak.h), run on `run`'s machinery through
 * run_mode.h. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "log.h"
#include "run_mode.h"
#include "soak.h"
#include "units.h"

static void soak_usage(void)
{
    fb_out("usage: mpirun -np N fabricbench soak --duration S [--interval S] [--tolerance PCT]\n"
           "                                    [BENCH] [run's options]\n\n"
           "Repeats one point (default: the DenseNet-121 gradient all-reduce, allreduce at\n"
           "27872824 bytes of float32 with 14 classes) through the runner for S seconds, and\n"
           "reads every node's health counters after each interval: InfiniBand port counters,\n"
           "rate and state, PCIe links of GPUs and HCAs (sysfs under $FB_SYSFS_ROOT, default\n"
           "/sys), NVML's ECC, XID, NVLink and throttle counters, NCCL's WARN lines.\n\n"
           "  --duration S      how long to soak, seconds (required)\n"
           "  --interval S      one row per rank and counter every S seconds (default 10)\n"
           "  --tolerance PCT   a slow-down below PCT %% of the baseline is never degraded\n"
           "                    (default 10); the limit is also 5 MADs of the baseline's trials\n"
           "  BENCH             a timed benchmark instead of allreduce (`fabricbench list`)\n"
           "  run's options     --backend, --coll, --sizes, --trials, --out, --timeout, ...\n"
           "                    (`fabricbench run --help`); --trial-ms is set from --interval\n\n"
           "Writes soak.csv, health.csv, results.csv (one point per interval) and env.json.\n"
           "Exit: 0 healthy, 1 degraded (each finding on a `soak: degraded:` line naming the\n"
           "rank, host, interval and counter), 2 bad usage, 3 timeout, 4 interrupted (SIGINT\n"
           "or SIGTERM: the finished intervals are kept). docs/soak.md.\n");
}

/* --NAME VALUE or --NAME=VALUE at argv[*i]: the value (NULL when absent), *i past it. */
static const char *soak_value(int argc, char **argv, int *i, const char *name, bool *matched)
{
    size_t n = strlen(name);
    const char *a = argv[*i];

    *matched = false;
    if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
        return NULL;
    *matched = true;
    if (a[n] == '=')
        return a + n + 1;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

/* soak's own options, taken out of argv into rest (run's parser reads the others). */
static fb_status soak_options(struct fb_soak *k, int argc, char **argv, char **rest, int *nrest,
                              bool *help, char *err, size_t errlen)
{
    static const char *const names[] = {"--duration", "--interval", "--tolerance"};
    bool have_duration = false;
    char why[256];

    *nrest = 0;
    *help = false;
    k->interval = 10.0;
    k->tolerance_pct = 10.0;
    for (int i = 0; i < argc; i++) {
        bool matched = false;
        int which;
        const char *v = NULL;
        fb_status st = FB_OK;

        if (i > 0 && (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0))
            *help = true;
        for (which = 0; which < 3 && !matched && i > 0; which++)
            v = soak_value(argc, argv, &i, names[which], &matched);
        if (!matched) {
            rest[(*nrest)++] = argv[i];
            continue;
        }
        which--;
        if (!v) {
            snprintf(err, errlen, "option '%s' needs a value", names[which]);
            return FB_ERR_USAGE;
        }
        if (which == 0 && (st = fb_real_parse(v, 0.001, 604800.0, &k->duration, why,
                                              sizeof why)) == FB_OK)
            have_duration = true;
        else if (which == 1)
            st = fb_real_parse(v, 0.001, 86400.0, &k->interval, why, sizeof why);
        else if (which == 2)
            st = fb_real_parse(v, 0.0, 1e12, &k->tolerance_pct, why, sizeof why);
        if (st != FB_OK) {
            snprintf(err, errlen, "bad value for %s: %s", names[which], why);
            return st;
        }
    }
    rest[*nrest] = NULL;
    if (*help)
        return FB_OK;
    if (!have_duration) {
        snprintf(err, errlen, "--duration is required (seconds to soak)");
        return FB_ERR_USAGE;
    }
    k->rule = fb_soak_rule_defaults();
    k->rule.tolerance = k->tolerance_pct / 100.0;
    k->intervals = (int)ceil(k->duration / k->interval - 1e-9);
    if (k->intervals <= k->rule.baseline) {
        snprintf(err, errlen, "--duration %g s with --interval %g s gives %d interval(s); the "
                 "first %d are the baseline: give at least %d", k->duration, k->interval,
                 k->intervals, k->rule.baseline, k->rule.baseline + 1);
        return FB_ERR_USAGE;
    }
    return FB_OK;
}

int fb_cmd_soak(int argc, char **argv)
{
    struct fb_soak *k = calloc(1, sizeof *k);
    char **rest = calloc((size_t)argc + 1, sizeof *rest), err[512];
    struct fb_run_mode mode = {.name = "soak", .usage = soak_usage, .prepare = fb_soak_prepare,
                               .check = fb_soak_check, .work = fb_soak_work, .arg = k};
    bool help;
    int nrest, rc;

    if (!k || !rest) {
        free(k);
        free(rest);
        return 1;
    }
    if (soak_options(k, argc, argv, rest, &nrest, &help, err, sizeof err) != FB_OK) {
        if (fb_cli_rank_hint() == 0)
            fb_error("soak: %s", err);
        free(k);
        free(rest);
        return 2;
    }
    rc = fb_cmd_run_mode(nrest, rest, &mode);
    free(k);
    free(rest);
    return rc;
}
