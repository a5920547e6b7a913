/* `fabricbench sweep`: sweeps what only a launch can change (binding, NCCL_* / UCX_* /
 * OMPI_MCA_* settings) by relaunching mpirun or srun once per launch variant: doctor, then
 * run, each command built for exec, printed and recorded. Not an MPI program: it never calls
 * MPI_Init. One variant writes its run folder directly in --out; several write
 * RUN/launches.csv and one run folder per launch, RUN/<variant>/. Here: the usage, the
 * options and the order of work; harness/launch/launch_sweep.c runs the launches. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cli.h"
#include "commands.h"
#include "escape.h"
#include "launch.h"
#include "launch_sweep.h"
#include "log.h"
#include "results.h"
#include "run_folder.h"
#include "subprocess.h"
#include "units.h"

enum { MAX_EXTRA = 128 };

enum {
    OPT_NP = 256, OPT_LAUNCHER, OPT_BINDING, OPT_VARY, OPT_MPIRUN_ARG, OPT_OUT, OPT_FORCE,
    OPT_TIMEOUT, OPT_DRY_RUN, OPT_NO_DOCTOR, OPT_NO_REPORT, OPT_HELP
};

static const struct option sweep_options[] = {
    {"np", required_argument, NULL, OPT_NP},
    {"launcher", required_argument, NULL, OPT_LAUNCHER},
    {"binding", required_argument, NULL, OPT_BINDING},
    {"vary", required_argument, NULL, OPT_VARY},
    {"mpirun-arg", required_argument, NULL, OPT_MPIRUN_ARG},
    {"launcher-arg", required_argument, NULL, OPT_MPIRUN_ARG},
    {"out", required_argument, NULL, OPT_OUT},
    {"force", no_argument, NULL, OPT_FORCE},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"dry-run", no_argument, NULL, OPT_DRY_RUN},
    {"no-doctor", no_argument, NULL, OPT_NO_DOCTOR},
    {"no-report", no_argument, NULL, OPT_NO_REPORT},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

struct sweep {
    struct fb_launch_sweep run; /* what running the launches needs */
    enum fb_binding bindings[2];
    size_t nbindings;
    const char *extra[MAX_EXTRA];
    const char *out;
    bool np_given;
    bool binding_given;
};

static void usage(void)
{
    printf("usage: fabricbench sweep [options] [-- RUN-ARGS...]\n"
           "Sweeps what only a launch can change by relaunching mpirun (or srun) once per\n"
           "launch variant: `doctor` then `run RUN-ARGS`, under the same launcher. Run it\n"
           "WITHOUT mpirun. The launch variants are the product of --binding and every --vary.\n\n"
           "  --np N                 ranks (default: the GPUs of this node, from\n"
           "                         CUDA_VISIBLE_DEVICES when set, else\n"
           "                         /proc/driver/nvidia/gpus or nvidia-smi -L; else 2)\n"
           "  --launcher mpirun|srun|auto   auto: srun inside a Slurm job (SLURM_JOB_ID),\n"
           "                         else mpirun\n"
           "  --binding socket|none|core|both   socket: each rank bound to its GPU's\n"
           "                         socket (mpirun --map-by ppr:K:socket --bind-to socket;\n"
           "                         srun --distribution=block:block --cpu-bind=socket);\n"
           "                         none: unbound; core: each rank on its own core (the\n"
           "                         host backend); both: socket and none. Default: socket\n"
           "                         on a node with GPUs, core on one without\n"
           "  --vary NAME=V1,V2,...  one launch per value (repeatable; a comma inside a value\n"
           "                         is written \\,). NAME: an NCCL_*, UCX_* or OMPI_MCA_*\n"
           "                         setting, e.g. NCCL_P2P_DISABLE, NCCL_SHM_DISABLE,\n"
           "                         NCCL_IB_DISABLE, NCCL_ALGO, NCCL_PROTO,\n"
           "                         NCCL_NET_GDR_LEVEL, NCCL_SOCKET_IFNAME,\n"
           "                         NCCL_MIN_NCHANNELS; mpirun gets -x NAME=VALUE, srun\n"
           "                         --export=ALL with NAME=VALUE in its environment\n"
           "  --mpirun-arg ARG       passed to the launcher as it is (repeatable), e.g.\n"
           "                         --mpirun-arg --oversubscribe, --mpirun-arg --hostfile\n"
           "                         --mpirun-arg hosts; also spelled --launcher-arg\n"
           "  --out DIR              the sweep's folder (default results/<date>-<time>-<host>)\n"
           "  --force                reuse a folder that already holds a run or a sweep\n"
           "  --timeout SECONDS      limit of each launcher command (doctor, run): on expiry\n"
           "                         its process group is stopped, the launch recorded as a\n"
           "                         timeout (exit status 124), and the sweep goes on\n"
           "  --dry-run              print the commands only; nothing is run or written\n"
           "  --no-doctor            skip `doctor --json DIR/doctor.json` before each run\n"
           "  --no-report            skip `fabricbench report` at the end\n"
           "  --help                 this text\n\n"
           "RUN-ARGS are `fabricbench run` options and benchmarks (not --out), e.g.\n"
           "  fabricbench sweep --binding both --vary NCCL_P2P_DISABLE=0,1 -- allreduce\n"
           "Exit status: 0 every launch succeeded, 1 one failed (the others still run), 2 bad\n"
           "input (nothing written). See docs/sweep.md.\n");
}

static fb_status parse_count(const char *text, long lo, long hi, long *v, const char *opt,
                             char *err, size_t errlen)
{
    char why[256];
    fb_status st = fb_count_parse(text, lo, hi, v, why, sizeof why);

    if (st != FB_OK)
        snprintf(err, errlen, "bad value for --%s: %s", opt, why);
    return st;
}

/* Checks RUN-ARGS with run's own parser, so bad ones are refused before anything starts. */
static fb_status check_run_args(struct sweep *s, char *err, size_t errlen)
{
    struct fb_options *o = calloc(1, sizeof *o);
    char **argv = calloc((size_t)s->run.nrun + 2, sizeof *argv), runerr[512];
    int help = 0;
    fb_status st = FB_ERR_NOMEM;

    if (!o || !argv)
        goto out;
    argv[0] = "run";
    for (int i = 0; i < s->run.nrun; i++)
        argv[i + 1] = s->run.run_args[i];
    st = fb_cli_parse_run(s->run.nrun + 1, argv, o, &help, runerr, sizeof runerr);
    if (st != FB_OK) {
        snprintf(err, errlen, "bad run argument after --: %s", runerr);
    } else if (help) {
        snprintf(err, errlen, "--help after -- (see `fabricbench run --help`)");
        st = FB_ERR_USAGE;
    } else if (o->out_dir) {
        snprintf(err, errlen, "--out after -- (give --out to sweep: each launch's folder is "
                              "chosen under it)");
        st = FB_ERR_USAGE;
    } else {
        for (size_t i = 0; i < o->ngroups && st == FB_OK; i++)
            if (o->groups[i] > s->run.launch.np) {
                snprintf(err, errlen, "bad run argument after --: --ranks asks for %d ranks, "
                                      "but --np is %d", o->groups[i], s->run.launch.np);
                st = FB_ERR_USAGE;
            }
        /* as run would refuse it in every launch, before any */
        for (size_t i = 0; i < o->npairs && st == FB_OK; i++)
            if (o->pairs[i][0] >= s->run.launch.np || o->pairs[i][1] >= s->run.launch.np) {
                snprintf(err, errlen, "bad run argument after --: --pairs %d:%d names a rank the "
                                      "launches do not have (--np %d: ranks 0..%d)",
                         o->pairs[i][0], o->pairs[i][1], s->run.launch.np,
                         s->run.launch.np - 1);
                st = FB_ERR_USAGE;
            }
        snprintf(s->run.backend, sizeof s->run.backend, "%s", o->backend);
        snprintf(s->run.coll, sizeof s->run.coll, "%s", o->coll);
    }
out:
    free(o);
    free(argv);
    return st;
}

/* GPUs of this node: CUDA_VISIBLE_DEVICES when set, else the driver's list, else
 * nvidia-smi -L. */
static int count_gpus(void)
{
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    char out[8192];
    char *argv[] = {"nvidia-smi", "-L", NULL};
    int n = 0, rc;
    DIR *d;

    if (visible) {
        if (!*visible || strcmp(visible, "-1") == 0 || strcmp(visible, "none") == 0)
            return 0;
        n = 1;
        for (const char *p = visible; *p; p++)
            n += *p == ',';
        return n;
    }
    if ((d = opendir("/proc/driver/nvidia/gpus"))) {
        struct dirent *e;
        while ((e = readdir(d)))
            n += e->d_name[0] != '.';
        closedir(d);
        if (n > 0)
            return n;
    }
    if (fb_subprocess_capture(argv, out, sizeof out, &rc) == FB_OK && rc == 0)
        for (char *p = out; (p = strstr(p, "GPU ")); p += 4)
            if (p == out || p[-1] == '\n')
                n++;
    return n;
}

/* Sockets of this node: distinct physical package ids of the CPUs (sysfs, under FB_SYSFS_ROOT
 * when set). */
static int count_sockets(void)
{
    unsigned char seen[1024] = {0};
    int n = 0;
    const char *root = getenv("FB_SYSFS_ROOT"); /* a described machine, as the readers of sysfs */
    char dir[4200];
    DIR *d;
    struct dirent *e;

    snprintf(dir, sizeof dir, "%s/devices/system/cpu", root && *root ? root : "/sys");
    if (!(d = opendir(dir)))
        return 1;
    while ((e = readdir(d))) {
        char path[4600];
        FILE *f;
        int id = -1;
        if (strncmp(e->d_name, "cpu", 3) != 0 || e->d_name[3] < '0' || e->d_name[3] > '9')
            continue;
        snprintf(path, sizeof path, "%s/%s/topology/physical_package_id", dir, e->d_name);
        if (!(f = fopen(path, "r")))
            continue;
        if (fscanf(f, "%d", &id) == 1 && id >= 0 && id < (int)sizeof seen && !seen[id]) {
            seen[id] = 1;
            n++;
        }
        fclose(f);
    }
    closedir(d);
    return n > 0 ? n : 1;
}

static fb_status parse(struct sweep *s, int argc, char **argv, int *help, char *err,
                       size_t errlen)
{
    static const char *const launchers[] = {"mpirun", "srun", "auto", NULL};
    static const char *const bindings[] = {"socket", "none", "core", "both", NULL};
    char why[256];
    int c;
    long v;
    fb_status st = FB_OK;
    const char *launcher = "auto";

    s->bindings[0] = FB_BIND_SOCKET;
    s->nbindings = 1;
    optind = 1;
    opterr = 0;
    while (st == FB_OK && (c = getopt_long(argc, argv, "+:", sweep_options, NULL)) != -1) {
        switch (c) {
        case OPT_NP:
            if ((st = parse_count(optarg, 1, 1 << 20, &v, "np", err, errlen)) == FB_OK) {
                s->run.launch.np = (int)v;
                s->np_given = true;
            }
            break;
        case OPT_LAUNCHER:
            if ((st = fb_cli_choice(optarg, launchers, why, sizeof why)) != FB_OK)
                snprintf(err, errlen, "bad value for --launcher: %s", why);
            launcher = optarg;
            break;
        case OPT_BINDING:
            if ((st = fb_cli_choice(optarg, bindings, why, sizeof why)) != FB_OK) {
                snprintf(err, errlen, "bad value for --binding: %s", why);
                break;
            }
            s->nbindings = strcmp(optarg, "both") == 0 ? 2 : 1;
            s->bindings[0] = strcmp(optarg, "none") == 0   ? FB_BIND_NONE
                             : strcmp(optarg, "core") == 0 ? FB_BIND_CORE
                                                           : FB_BIND_SOCKET;
            s->bindings[1] = FB_BIND_NONE;
            s->binding_given = true;
            break;
        case OPT_VARY:
            if (s->run.nvars == FB_LAUNCH_MAX_VARS) {
                snprintf(err, errlen, "more than %d --vary", FB_LAUNCH_MAX_VARS);
                st = FB_ERR_USAGE;
                break;
            }
            if ((st = fb_launch_var_parse(optarg, &s->run.vars[s->run.nvars], why, sizeof why)) !=
                FB_OK) {
                snprintf(err, errlen, "bad value for --vary: %s", why);
                break;
            }
            for (size_t i = 0; i < s->run.nvars && st == FB_OK; i++)
                if (strcmp(s->run.vars[i].name, s->run.vars[s->run.nvars].name) == 0) {
                    snprintf(err, errlen, "bad value for --vary: %s is varied twice",
                             s->run.vars[i].name);
                    st = FB_ERR_USAGE;
                }
            s->run.nvars++; /* freed with the others even when refused */
            break;
        case OPT_MPIRUN_ARG:
            if (s->run.launch.nextra == MAX_EXTRA) {
                snprintf(err, errlen, "more than %d --mpirun-arg", MAX_EXTRA);
                st = FB_ERR_USAGE;
                break;
            }
            if (optarg[fb_escape_control_at(optarg)]) {
                /* printed in every launch line (and --dry-run's): no escape sequence */
                snprintf(err, errlen, "bad value for --mpirun-arg: it holds a control character");
                st = FB_ERR_USAGE;
                break;
            }
            s->extra[s->run.launch.nextra++] = optarg;
            break;
        case OPT_OUT:
            if (!*optarg) {
                snprintf(err, errlen, "bad value for --out: empty path");
                st = FB_ERR_USAGE;
            } else if (optarg[fb_escape_control_at(optarg)]) {
                snprintf(err, errlen, "bad value for --out: it holds a control character");
                st = FB_ERR_USAGE;
            }
            s->out = optarg;
            break;
        case OPT_FORCE: s->run.force = true; break;
        case OPT_TIMEOUT:
            if ((st = fb_real_parse(optarg, 0.1, 1e7, &s->run.timeout_s, why, sizeof why)) != FB_OK)
                snprintf(err, errlen, "bad value for --timeout: %s", why);
            break;
        case OPT_DRY_RUN: s->run.dry_run = true; break;
        case OPT_NO_DOCTOR: s->run.no_doctor = true; break;
        case OPT_NO_REPORT: s->run.no_report = true; break;
        case OPT_HELP: *help = 1; return FB_OK;
        default:
            fb_cli_option_error(c, argv, err, errlen);
            return FB_ERR_USAGE;
        }
    }
    /* glibc keeps "+" (stop at the first non-option) until getopt is reinitialised through
     * optind = 0; run's parser, called next on RUN-ARGS, sets optind = 1 and expects the
     * default order, so reinitialise it here with an empty call. */
    {
        int end = optind;
        char *none[] = {argv[0], NULL};
        optind = 0;
        getopt_long(1, none, ":", sweep_options, NULL);
        optind = end;
    }
    if (st != FB_OK)
        return st;
    if (optind < argc && strcmp(argv[optind - 1], "--") != 0) {
        snprintf(err, errlen, "unexpected argument '%s' (run arguments go after --)",
                 argv[optind]);
        return FB_ERR_USAGE;
    }
    s->run.run_args = argv + optind;
    s->run.nrun = argc - optind;
    /* "-- run h2d ..." reads as well as "-- h2d ..." */
    if (s->run.nrun > 0 && strcmp(s->run.run_args[0], "run") == 0) {
        s->run.run_args++;
        s->run.nrun--;
    }
    s->run.launch.extra = s->extra;
    s->run.launch.launcher = strcmp(launcher, "srun") == 0 ? FB_LAUNCHER_SRUN
                             : strcmp(launcher, "mpirun") == 0
                                 ? FB_LAUNCHER_MPIRUN
                                 : (getenv("SLURM_JOB_ID") && *getenv("SLURM_JOB_ID"))
                                       ? FB_LAUNCHER_SRUN
                                       : FB_LAUNCHER_MPIRUN;
    s->run.launch.gpus = count_gpus();
    s->run.launch.sockets = count_sockets();
    if (!s->np_given)
        s->run.launch.np = s->run.launch.gpus > 0 ? s->run.launch.gpus : 2;
    /* The default binding is the field's advice for this node: with GPUs, each rank on its GPU's
     * socket; without one the CPU is the device, and each rank gets a core of its own (ranks
     * bound to one whole socket would share its cores: doctor's binding WARN). */
    if (!s->binding_given)
        s->bindings[0] = s->run.launch.gpus > 0 ? FB_BIND_SOCKET : FB_BIND_CORE;
    s->run.launch.as_root = geteuid() == 0;
    if ((st = check_run_args(s, err, errlen)) != FB_OK)
        return st;
    st = fb_launch_variants(s->bindings, s->nbindings, s->run.vars, s->run.nvars, &s->run.variants,
                            &s->run.nvariants, why, sizeof why);
    if (st == FB_ERR_USAGE)
        snprintf(err, errlen, "%s", why);
    return st;
}

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* The sweep's folder: --out, or results/<date>-<time>-<host> made unique. Refused when it
 * holds a run or a sweep already, unless --force. Nothing is created here. */
static fb_status choose_root(struct sweep *s, char *err, size_t errlen)
{
    char host[256] = "host", id[300], path[4200];
    struct stat sb;

    if (s->out) {
        /* before anything is written: a link as --out is refused as run refuses it
         * (docs/run-folder.md), not found out by the first launch's run */
        if (fb_run_folder_output("--out", s->out, true, err, errlen) != FB_OK)
            return FB_ERR_USAGE;
        if (strlen(s->out) >= sizeof s->run.root) {
            snprintf(err, errlen, "bad value for --out: path too long");
            return FB_ERR_USAGE;
        }
        memcpy(s->run.root, s->out, strlen(s->out) + 1);
        if (stat(s->run.root, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
            snprintf(err, errlen, "cannot use '%.900s' as the sweep's folder: not a folder",
                     s->run.root);
            return FB_ERR_USAGE;
        }
        for (size_t i = 0; !s->run.force && i < 2; i++) {
            snprintf(path, sizeof path, "%s/%s", s->run.root, i ? "launches.csv" : "results.csv");
            if (exists(path)) {
                snprintf(err, errlen, "'%.900s' already holds a %s (use --force to reuse it)",
                         s->run.root, i ? "sweep" : "run");
                return FB_ERR_USAGE;
            }
        }
        /* each launch's folder (its variant's name, from --vary's values) below the sweep's:
         * never an existing link (a reused folder, --force) */
        for (size_t k = 0; s->run.nvariants > 1 && exists(s->run.root) && k < s->run.nvariants;
             k++) {
            char why[900];
            if (fb_run_folder_below(s->run.root, s->run.variants[k].name, why, sizeof why) !=
                FB_OK) {
                snprintf(err, errlen, "launch folder %.960s", why);
                return FB_ERR_USAGE;
            }
        }
        return FB_OK;
    }
    gethostname(host, sizeof host - 1);
    /* the name `run` gives its own default folder */
    if (fb_results_free_id("results", host, id, sizeof id, s->run.root, sizeof s->run.root))
        return FB_OK;
    snprintf(err, errlen, "cannot find a free folder under 'results'");
    return FB_ERR_USAGE;
}

int fb_cmd_sweep(int argc, char **argv)
{
    struct sweep *s = calloc(1, sizeof *s);
    char err[1024] = "";
    int help = 0, rc = 2;
    ssize_t len;
    fb_status st;

    if (!s)
        return 1;
    st = parse(s, argc, argv, &help, err, sizeof err);
    if (st == FB_OK && help) {
        usage();
        rc = 0;
        goto out;
    }
    if (st == FB_OK)
        st = choose_root(s, err, sizeof err);
    if (st == FB_OK && (len = readlink("/proc/self/exe", s->run.exe, sizeof s->run.exe - 1)) > 0)
        s->run.exe[len] = '\0';
    else if (st == FB_OK) {
        snprintf(err, sizeof err, "cannot find this program's own path (/proc/self/exe)");
        st = FB_ERR_USAGE;
    }
    if (st == FB_OK && !(s->run.outcomes = calloc(s->run.nvariants, sizeof *s->run.outcomes)))
        st = FB_ERR_NOMEM;
    if (st != FB_OK) {
        fb_error("sweep: %s", err[0] ? err : fb_status_str(st));
        rc = fb_status_exit_code(st);
        goto out;
    }
    if (!s->run.dry_run && fb_mkdirs(s->run.root) != 0) {
        fb_error("sweep: cannot create '%s': %s", s->run.root, strerror(errno));
        rc = 2;
        goto out;
    }
    rc = fb_launch_sweep_main(&s->run);
out:
    for (size_t i = 0; i < s->run.nvars; i++)
        fb_launch_var_free(&s->run.vars[i]);
    for (size_t k = 0; s->run.outcomes && k < s->run.nvariants; k++)
        free(s->run.outcomes[k].command);
    free(s->run.outcomes);
    free(s->run.variants);
    free(s);
    return rc;
}
