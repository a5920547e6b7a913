/* `fabricbench sweep`: sweeps what only a launch can change (binding, NCCL_* / UCX_* /
 * OMPI_MCA_* settings) by relaunching mpirun or srun once per launch variant: doctor, then
 * run, each command built for exec, printed and recorded. Not an MPI program: it never calls
 * MPI_Init. One variant writes its run folder directly in --out; several write
 * RUN/launches.csv and one run folder per launch, RUN/<variant>/. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cli.h"
#include "commands.h"
#include "csv.h"
#include "launch.h"
#include "log.h"
#include "progress.h"
#include "results.h"
#include "subprocess.h"
#include "units.h"

enum { MAX_EXTRA = 128, GRACE_S = 10 };

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

/* What one launch did. */
struct outcome {
    bool ran;
    struct fb_subprocess_result doctor, run;
    bool doctor_ran;
    char *command; /* the run's command line */
};

struct sweep {
    struct fb_launch launch;
    enum fb_binding bindings[2];
    size_t nbindings;
    struct fb_launch_var vars[FB_LAUNCH_MAX_VARS];
    size_t nvars;
    const char *extra[MAX_EXTRA];
    const char *out;
    bool force, dry_run, no_doctor, no_report, np_given;
    double timeout_s;
    char **run_args; /* after "--" */
    int nrun;
    char backend[16], coll[16]; /* of the run arguments, given to doctor as well */
    struct fb_launch_variant *variants;
    size_t nvariants;
    struct outcome *outcomes;
    char exe[4096], root[3800]; /* room for "/<variant>/doctor.json" in 4096 */
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void usage(void)
{
    printf("usage: fabricbench sweep [options] [-- RUN-ARGS...]\n"
           "Sweeps what only a launch can change by relaunching mpirun (or srun) once per\n"
           "launch variant: `doctor` then `run RUN-ARGS`, under the same launcher. Run it\n"
           "WITHOUT mpirun. The launch variants are the product of --binding and every --vary.\n\n"
           "  --np N                 ranks (default: the GPUs of this node, from\n"
           "                         /proc/driver/nvidia/gpus or nvidia-smi -L; else 2)\n"
           "  --launcher mpirun|srun|auto   auto: srun inside a Slurm job (SLURM_JOB_ID),\n"
           "                         else mpirun\n"
           "  --binding socket|none|core|both   socket (default): each rank bound to its\n"
           "                         GPU's socket (mpirun --map-by ppr:K:socket --bind-to\n"
           "                         socket; srun --cpu-bind=socket); none: unbound; core: each\n"
           "                         rank on its own core (host backend); both: socket and none\n"
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
    char **argv = calloc((size_t)s->nrun + 2, sizeof *argv), runerr[512];
    int help = 0;
    fb_status st = FB_ERR_NOMEM;

    if (!o || !argv)
        goto out;
    argv[0] = "run";
    for (int i = 0; i < s->nrun; i++)
        argv[i + 1] = s->run_args[i];
    st = fb_cli_parse_run(s->nrun + 1, argv, o, &help, runerr, sizeof runerr);
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
            if (o->groups[i] > s->launch.np) {
                snprintf(err, errlen, "bad run argument after --: --ranks asks for %d ranks, "
                                      "but --np is %d", o->groups[i], s->launch.np);
                st = FB_ERR_USAGE;
            }
        snprintf(s->backend, sizeof s->backend, "%s", o->backend);
        snprintf(s->coll, sizeof s->coll, "%s", o->coll);
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

/* Sockets of this node: distinct physical package ids of the CPUs. */
static int count_sockets(void)
{
    unsigned char seen[1024] = {0};
    int n = 0;
    DIR *d = opendir("/sys/devices/system/cpu");
    struct dirent *e;

    if (!d)
        return 1;
    while ((e = readdir(d))) {
        char path[512];
        FILE *f;
        int id = -1;
        if (strncmp(e->d_name, "cpu", 3) != 0 || e->d_name[3] < '0' || e->d_name[3] > '9')
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/%s/topology/physical_package_id",
                 e->d_name);
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
                s->launch.np = (int)v;
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
            break;
        case OPT_VARY:
            if (s->nvars == FB_LAUNCH_MAX_VARS) {
                snprintf(err, errlen, "more than %d --vary", FB_LAUNCH_MAX_VARS);
                st = FB_ERR_USAGE;
                break;
            }
            if ((st = fb_launch_var_parse(optarg, &s->vars[s->nvars], why, sizeof why)) !=
                FB_OK) {
                snprintf(err, errlen, "bad value for --vary: %s", why);
                break;
            }
            for (size_t i = 0; i < s->nvars && st == FB_OK; i++)
                if (strcmp(s->vars[i].name, s->vars[s->nvars].name) == 0) {
                    snprintf(err, errlen, "bad value for --vary: %s is varied twice",
                             s->vars[i].name);
                    st = FB_ERR_USAGE;
                }
            s->nvars++; /* freed with the others even when refused */
            break;
        case OPT_MPIRUN_ARG:
            if (s->launch.nextra == MAX_EXTRA) {
                snprintf(err, errlen, "more than %d --mpirun-arg", MAX_EXTRA);
                st = FB_ERR_USAGE;
                break;
            }
            s->extra[s->launch.nextra++] = optarg;
            break;
        case OPT_OUT:
            if (!*optarg) {
                snprintf(err, errlen, "bad value for --out: empty path");
                st = FB_ERR_USAGE;
            }
            s->out = optarg;
            break;
        case OPT_FORCE: s->force = true; break;
        case OPT_TIMEOUT:
            if ((st = fb_real_parse(optarg, 0.1, 1e7, &s->timeout_s, why, sizeof why)) != FB_OK)
                snprintf(err, errlen, "bad value for --timeout: %s", why);
            break;
        case OPT_DRY_RUN: s->dry_run = true; break;
        case OPT_NO_DOCTOR: s->no_doctor = true; break;
        case OPT_NO_REPORT: s->no_report = true; break;
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
    s->run_args = argv + optind;
    s->nrun = argc - optind;
    /* "-- run h2d ..." reads as well as "-- h2d ..." */
    if (s->nrun > 0 && strcmp(s->run_args[0], "run") == 0) {
        s->run_args++;
        s->nrun--;
    }
    s->launch.extra = s->extra;
    s->launch.launcher = strcmp(launcher, "srun") == 0 ? FB_LAUNCHER_SRUN
                         : strcmp(launcher, "mpirun") == 0
                             ? FB_LAUNCHER_MPIRUN
                             : (getenv("SLURM_JOB_ID") && *getenv("SLURM_JOB_ID"))
                                   ? FB_LAUNCHER_SRUN
                                   : FB_LAUNCHER_MPIRUN;
    s->launch.gpus = count_gpus();
    s->launch.sockets = count_sockets();
    if (!s->np_given)
        s->launch.np = s->launch.gpus > 0 ? s->launch.gpus : 2;
    s->launch.as_root = geteuid() == 0;
    if ((st = check_run_args(s, err, errlen)) != FB_OK)
        return st;
    st = fb_launch_variants(s->bindings, s->nbindings, s->vars, s->nvars, &s->variants,
                            &s->nvariants, why, sizeof why);
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
        if (strlen(s->out) >= sizeof s->root) {
            snprintf(err, errlen, "bad value for --out: path too long");
            return FB_ERR_USAGE;
        }
        memcpy(s->root, s->out, strlen(s->out) + 1);
        if (stat(s->root, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
            snprintf(err, errlen, "cannot use '%.900s' as the sweep's folder: not a folder",
                     s->root);
            return FB_ERR_USAGE;
        }
        for (size_t i = 0; !s->force && i < 2; i++) {
            snprintf(path, sizeof path, "%s/%s", s->root, i ? "launches.csv" : "results.csv");
            if (exists(path)) {
                snprintf(err, errlen, "'%.900s' already holds a %s (use --force to reuse it)",
                         s->root, i ? "sweep" : "run");
                return FB_ERR_USAGE;
            }
        }
        return FB_OK;
    }
    gethostname(host, sizeof host - 1);
    /* the name `run` gives its own default folder */
    if (fb_results_free_id("results", host, id, sizeof id, s->root, sizeof s->root))
        return FB_OK;
    snprintf(err, errlen, "cannot find a free folder under 'results'");
    return FB_ERR_USAGE;
}

/* dir holds 4096 bytes: the root's 3800 and a variant's 160 fit. */
static void launch_dir(const struct sweep *s, size_t k, char dir[4096])
{
    if (s->nvariants == 1)
        snprintf(dir, 4096, "%s", s->root);
    else
        snprintf(dir, 4096, "%s/%s", s->root, s->variants[k].name);
}

/* The argv (and environment additions) of doctor or run for launch k. */
static fb_status build(const struct sweep *s, size_t k, bool doctor, struct fb_strv *argv,
                       struct fb_strv *env)
{
    struct fb_strv tail = {0};
    char dir[4096], path[4200];
    fb_status st;

    launch_dir(s, k, dir);
    if (doctor) {
        snprintf(path, sizeof path, "%s/doctor.json", dir);
        st = fb_strv_push(&tail, "doctor");
        if (st == FB_OK)
            st = fb_strv_push(&tail, "--json");
        if (st == FB_OK)
            st = fb_strv_push(&tail, path);
        /* doctor opens the backend and collectives the run will */
        if (st == FB_OK && strcmp(s->backend, "auto") != 0 &&
            (st = fb_strv_push(&tail, "--backend")) == FB_OK)
            st = fb_strv_push(&tail, s->backend);
        if (st == FB_OK && strcmp(s->coll, "auto") != 0 &&
            (st = fb_strv_push(&tail, "--coll")) == FB_OK)
            st = fb_strv_push(&tail, s->coll);
    } else {
        st = fb_strv_push(&tail, "run");
        if (st == FB_OK)
            st = fb_strv_push(&tail, "--out");
        if (st == FB_OK)
            st = fb_strv_push(&tail, dir);
        if (st == FB_OK && s->force)
            st = fb_strv_push(&tail, "--force");
        for (int i = 0; st == FB_OK && i < s->nrun; i++)
            st = fb_strv_push(&tail, s->run_args[i]);
    }
    if (st == FB_OK)
        st = fb_launch_command(&s->launch, &s->variants[k], s->vars, s->nvars, s->exe,
                               (const char *const *)tail.v, tail.n, argv, env);
    fb_strv_free(&tail);
    return st;
}

static const char *status_word(const struct outcome *o)
{
    if (!o->ran)
        return "not_run";
    if (o->run.interrupted)
        return "interrupted";
    if (o->run.timed_out)
        return "timeout";
    return o->run.exit_status == 0 ? "ok" : "failed";
}

/* RUN/launches.csv with a row per launch done so far, written atomically. */
static fb_status write_launches(const struct sweep *s)
{
    struct fb_atomic_file af;
    char path[4200];
    const char *fields[FB_LAUNCH_MAX_VARS + 12];
    size_t n;
    fb_status st;

    snprintf(path, sizeof path, "%s/launches.csv", s->root);
    if ((st = fb_atomic_open(&af, path)) != FB_OK)
        return st;
    n = 0;
    fields[n++] = "variant";
    fields[n++] = "launcher";
    fields[n++] = "binding";
    for (size_t i = 0; i < s->nvars; i++)
        fields[n++] = s->vars[i].name;
    fields[n++] = "status";
    fields[n++] = "exit_status";
    fields[n++] = "wall_s";
    fields[n++] = "doctor_exit_status";
    fields[n++] = "run_dir";
    fields[n++] = "command";
    if (fb_csv_row(af.f, fields, n) != 0)
        st = FB_ERR_IO;
    for (size_t k = 0; k < s->nvariants && st == FB_OK; k++) {
        const struct outcome *o = &s->outcomes[k];
        char exit_s[16], wall[32], doctor[16];
        if (!o->ran)
            continue;
        snprintf(exit_s, sizeof exit_s, "%d", o->run.exit_status);
        snprintf(wall, sizeof wall, "%.3f", o->run.wall_s);
        if (o->doctor_ran)
            snprintf(doctor, sizeof doctor, "%d", o->doctor.exit_status);
        else
            doctor[0] = '\0';
        n = 0;
        fields[n++] = s->variants[k].name;
        fields[n++] = s->launch.launcher == FB_LAUNCHER_SRUN ? "srun" : "mpirun";
        fields[n++] = s->variants[k].binding == FB_BIND_NONE   ? "none"
                      : s->variants[k].binding == FB_BIND_CORE ? "core"
                                                               : "socket";
        for (size_t i = 0; i < s->nvars; i++)
            fields[n++] = s->variants[k].values[i];
        fields[n++] = status_word(o);
        fields[n++] = exit_s;
        fields[n++] = wall;
        fields[n++] = doctor;
        fields[n++] = s->variants[k].name; /* relative to launches.csv */
        fields[n++] = o->command ? o->command : "";
        if (fb_csv_row(af.f, fields, n) != 0)
            st = FB_ERR_IO;
    }
    if (st != FB_OK) {
        fb_atomic_abort(&af);
        return st;
    }
    return fb_atomic_commit(&af);
}

/* DIR/launch.txt: the exact commands of the launch that made this run folder, and their
 * fate, so a lone run folder says how it was launched. */
static void write_launch_txt(const struct sweep *s, size_t k, const char *doctor_cmd)
{
    const struct outcome *o = &s->outcomes[k];
    char dir[4096], path[4200], *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    if (!f)
        return;
    launch_dir(s, k, dir);
    snprintf(path, sizeof path, "%s/launch.txt", dir);
    fprintf(f, "# fabricbench sweep: launch %zu of %zu, variant %s\n", k + 1, s->nvariants,
            s->variants[k].name);
    if (o->doctor_ran)
        fprintf(f, "doctor: %s\ndoctor_exit_status: %d\n", doctor_cmd, o->doctor.exit_status);
    fprintf(f, "run: %s\nstatus: %s\nexit_status: %d\nwall_s: %.3f\n",
            o->command ? o->command : "", status_word(o), o->run.exit_status, o->run.wall_s);
    fclose(f);
    if (text && fb_atomic_write(path, text, len) != FB_OK)
        fb_warn("sweep: cannot write '%s'", path);
    free(text);
}

/* Runs one launcher command; prints it first. */
static fb_status launch_one(struct sweep *s, size_t k, bool doctor, char **line,
                            struct fb_subprocess_result *res)
{
    struct fb_strv argv = {0}, env = {0};
    fb_status st = build(s, k, doctor, &argv, &env);

    *line = NULL;
    if (st == FB_OK && !(*line = fb_launch_command_line(&env, &argv)))
        st = FB_ERR_NOMEM;
    if (st == FB_OK) {
        printf("%s\n", *line);
        fflush(stdout);
    }
    if (st == FB_OK && !s->dry_run) {
        st = fb_subprocess_wait(argv.v, env.v, s->timeout_s, GRACE_S, &stop_requested, 0, res);
        if (st != FB_OK)
            fb_error("sweep: cannot start '%s': %s", argv.v[0], strerror(errno));
        else if (res->timed_out)
            fb_error("sweep: %s %s ran past --timeout %gs: stopped (recorded as exit status %d)",
                     s->variants[k].name, doctor ? "doctor" : "run", s->timeout_s,
                     res->exit_status);
    }
    fb_strv_free(&argv);
    fb_strv_free(&env);
    return st;
}

/* `fabricbench report RUN`, when this binary has it. */
static void report(const struct sweep *s)
{
    char *help[] = {(char *)s->exe, "report", "--help", NULL};
    char *argv[] = {(char *)s->exe, "report", (char *)s->root, NULL};
    struct fb_subprocess_result res;

    if (fb_subprocess_wait(help, NULL, 30, 2, NULL, FB_SUBPROCESS_SILENT, &res) != FB_OK ||
        res.exit_status != 0) {
        printf("sweep: `fabricbench report` is not available in this build: no summary.md\n");
        return;
    }
    printf("%s report %s\n", s->exe, s->root);
    fflush(stdout);
    if (fb_subprocess_wait(argv, NULL, 0, 2, &stop_requested, 0, &res) == FB_OK &&
        res.exit_status != 0)
        fb_warn("sweep: report exited %d", res.exit_status);
}

static int sweep_main(struct sweep *s)
{
    struct fb_progress progress;
    struct sigaction sa;
    int failed = 0;
    fb_status st = FB_OK;

    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    /* a dry run has no times to estimate: its launches are named on stdout instead */
    fb_progress_init(&progress, s->dry_run ? NULL : stderr, "launch ");
    fb_progress_plan(&progress, "launches", (long)s->nvariants);
    printf("# fabricbench sweep: %zu launch%s of %d rank%s with %s into %s%s\n", s->nvariants,
           s->nvariants == 1 ? "" : "es", s->launch.np, s->launch.np == 1 ? "" : "s",
           s->launch.launcher == FB_LAUNCHER_SRUN ? "srun" : "mpirun", s->root,
           s->dry_run ? " (dry run: nothing is run)" : "");
    fflush(stdout);
    for (size_t k = 0; k < s->nvariants && !stop_requested; k++) {
        struct outcome *o = &s->outcomes[k];
        char dir[4096], *doctor_cmd = NULL;

        fb_progress_begin(&progress, "launches", s->variants[k].name);
        if (s->dry_run)
            printf("# launch %zu/%zu: %s\n", k + 1, s->nvariants, s->variants[k].name);
        launch_dir(s, k, dir);
        if (!s->dry_run && fb_mkdirs(dir) != 0) {
            fb_error("sweep: cannot create '%s': %s", dir, strerror(errno));
            st = FB_ERR_IO;
            break;
        }
        if (!s->no_doctor) {
            if ((st = launch_one(s, k, true, &doctor_cmd, &o->doctor)) != FB_OK)
                break;
            o->doctor_ran = !s->dry_run;
            if (o->doctor_ran && o->doctor.exit_status != 0 && !o->doctor.interrupted)
                fb_warn("sweep: %s: doctor exited %d (a FAIL above, or it could not run); "
                        "measuring anyway", s->variants[k].name, o->doctor.exit_status);
        }
        if (stop_requested) {
            o->run.interrupted = true; /* stopped during doctor: the run never started */
            o->run.exit_status = 130;
        } else if ((st = launch_one(s, k, false, &o->command, &o->run)) != FB_OK) {
            free(doctor_cmd);
            break;
        }
        if (s->dry_run) {
            free(doctor_cmd);
            continue;
        }
        o->ran = true;
        if (o->run.exit_status != 0 || o->run.interrupted) {
            failed++;
            fb_error("sweep: %s: run %s (exit status %d)%s", s->variants[k].name,
                     o->run.interrupted ? "interrupted"
                     : o->run.timed_out ? "timed out"
                                        : "failed",
                     o->run.exit_status, stop_requested ? "" : "; going on");
        }
        write_launch_txt(s, k, doctor_cmd ? doctor_cmd : "");
        free(doctor_cmd);
        if (s->nvariants > 1 && write_launches(s) != FB_OK)
            fb_warn("sweep: cannot write %s/launches.csv", s->root);
    }
    fb_progress_end(&progress);
    if (s->dry_run)
        return st == FB_OK ? 0 : 1;
    if (stop_requested) {
        fb_error("sweep: interrupted; the launches so far are in %s", s->root);
        return 1;
    }
    printf("\n# sweep: %zu launch%s, %d failed\n", s->nvariants, s->nvariants == 1 ? "" : "es",
           failed);
    for (size_t k = 0; k < s->nvariants; k++)
        printf("#   %-40s %-8s exit %3d  %8.1f s\n", s->variants[k].name,
               status_word(&s->outcomes[k]), s->outcomes[k].run.exit_status,
               s->outcomes[k].run.wall_s);
    fflush(stdout);
    if (!s->no_report)
        report(s);
    printf("sweep folder: %s%s\n", s->root, s->nvariants > 1 ? " (launches.csv, one folder per launch)" : "");
    return st != FB_OK || failed ? 1 : 0;
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
    if (st == FB_OK && (len = readlink("/proc/self/exe", s->exe, sizeof s->exe - 1)) > 0)
        s->exe[len] = '\0';
    else if (st == FB_OK) {
        snprintf(err, sizeof err, "cannot find this program's own path (/proc/self/exe)");
        st = FB_ERR_USAGE;
    }
    if (st == FB_OK && !(s->outcomes = calloc(s->nvariants, sizeof *s->outcomes)))
        st = FB_ERR_NOMEM;
    if (st != FB_OK) {
        fb_error("sweep: %s", err[0] ? err : fb_status_str(st));
        rc = fb_status_exit_code(st);
        goto out;
    }
    if (!s->dry_run && fb_mkdirs(s->root) != 0) {
        fb_error("sweep: cannot create '%s': %s", s->root, strerror(errno));
        rc = 2;
        goto out;
    }
    rc = sweep_main(s);
out:
    for (size_t i = 0; i < s->nvars; i++)
        fb_launch_var_free(&s->vars[i]);
    for (size_t k = 0; s->outcomes && k < s->nvariants; k++)
        free(s->outcomes[k].command);
    free(s->outcomes);
    free(s->variants);
    free(s);
    return rc;
}
