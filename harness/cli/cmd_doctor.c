/* `fabricbench doctor`: opens a session exactly as `run` would, gathers every rank's facts,
 * and on rank 0 prints the environment fingerprint as a table followed by the checks (PASS,
 * WARN, FAIL with a fix), optionally writing the fingerprint JSON. Runs between MPI_Init and
 * MPI_Finalize, which main owns. */
#define _GNU_SOURCE
#include <getopt.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>
#include <fb_version.h>

#include "cli.h"
#include "doctor.h"
#include "fingerprint.h"
#include "ib.h"
#include "json_file.h"
#include "log.h"
#include "nccl_report.h"
#include "nccl_verdict.h"
#include "run_folder.h"
#include "session.h"
#include "topo.h"

enum { OPT_BACKEND = 256, OPT_COLL, OPT_JSON, OPT_NCCL_LOG, OPT_TIMEOUT, OPT_SELF_BIND };

static const struct option doctor_options[] = {
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"coll", required_argument, NULL, OPT_COLL},
    {"json", required_argument, NULL, OPT_JSON},
    {"nccl-log", required_argument, NULL, OPT_NCCL_LOG},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"self-bind", no_argument, NULL, OPT_SELF_BIND},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void usage(void)
{
    printf("usage: mpirun -np N fabricbench doctor [--backend B] [--coll C] [--json FILE]\n"
           "                                       [--nccl-log DIR|FILE] [--timeout S]\n"
           "                                       [--self-bind]\n\n"
           "Prints this job's environment (hosts, CPUs, NUMA, each rank's binding and GPU) and\n"
           "checks it against the usual advice for GPU training fabrics: one rank per GPU, each\n"
           "rank bound to its GPU's socket, CUDA-aware MPI, InfiniBand ports up.\n"
           "Launch it exactly as you launch `run`, so it judges the same binding.\n\n"
           "options:\n"
           "  --backend auto|host|cuda|host-strict\n"
           "                             device backend to open (default auto)\n"
           "  --coll auto|nccl|mpi       collectives to choose (default auto)\n"
           "  --json FILE                also write the fingerprint and the verdicts (\"checks\") as\n"
           "                             JSON to FILE\n"
           "  --nccl-log DIR|FILE        also judge NCCL's INFO log: a run folder's\n"
           "                             nccl-rank*.log, or one file (see `nccl-log`)\n"
           "  --timeout SECONDS          limit of every phase (MPI start, gathering the facts);\n"
           "                             on expiry the ranks that had not arrived are named,\n"
           "                             exit code 3 (default 300; 0 = none)\n"
           "  --self-bind                each rank binds itself to its GPU's socket first, as\n"
           "                             `run --self-bind` does (sweep adds it to both)\n"
           "  --help                     this text\n\n"
           "exit code: 0 nothing failed (warnings allowed), 1 a check failed, 2 bad options,\n"
           "3 timed out, 4 interrupted (SIGINT, SIGTERM).\n");
}

/* Parses the options; on bad input writes one line to err and returns false. */
static bool parse(int argc, char **argv, const char **backend, const char **coll,
                  const char **json, const char **nccl_log, bool *self_bind, bool *help,
                  char *err, size_t errlen)
{
    char why[160];
    int c;

    optind = 0; /* a full restart of getopt (see cli.c) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", doctor_options, NULL)) != -1) {
        switch (c) {
        case OPT_BACKEND:
            if (fb_cli_choice(optarg, fb_cli_backends, why, sizeof why) != FB_OK) {
                snprintf(err, errlen, "bad value for --backend: %s", why);
                return false;
            }
            *backend = optarg;
            break;
        case OPT_COLL:
            if (fb_cli_choice(optarg, fb_cli_colls, why, sizeof why) != FB_OK) {
                snprintf(err, errlen, "bad value for --coll: %s", why);
                return false;
            }
            *coll = optarg;
            break;
        case OPT_JSON:
            if (!*optarg) {
                snprintf(err, errlen, "bad value for --json: empty path");
                return false;
            }
            *json = optarg;
            break;
        case OPT_NCCL_LOG:
            *nccl_log = optarg;
            break;
        case OPT_SELF_BIND:
            *self_bind = true;
            break;
        case OPT_TIMEOUT: {
            double unused; /* in force since before MPI_Init (main.c) */
            if (fb_cli_timeout_parse(optarg, &unused, why, sizeof why) != FB_OK) {
                snprintf(err, errlen, "bad value for --timeout: %s", why);
                return false;
            }
            break;
        }
        case 'h':
            *help = true;
            break;
        default:
            fb_cli_option_error(c, argv, err, errlen);
            return false;
        }
    }
    if (optind < argc) {
        snprintf(err, errlen, "unexpected argument '%s'", argv[optind]);
        return false;
    }
    return true;
}

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "?";
}

static double jnum(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

static const cJSON *jobj(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* The fingerprint, as read by a person: the same JSON that --json writes, so the two agree. */
static void print_fingerprint(const cJSON *fp, const struct fb_rank_facts *all, int n)
{
    const cJSON *host = jobj(fp, "host"), *ib = jobj(fp, "infiniband");
    int hostw = 4;

    fb_out("fabricbench doctor %s (commit %s)\n", FB_VERSION, FB_GIT_COMMIT);
    fb_out("host         %s: %s %s\n", jstr(host, "name"), jstr(host, "kernel"),
           jstr(host, "arch"));
    fb_out("CPU          %s\n", jstr(host, "cpu_model"));
    if (cJSON_GetObjectItemCaseSensitive(host, "sockets")) {
        fb_out("layout       %.0f socket(s), %.0f NUMA node(s), %.0f cores, %.0f PUs\n",
               jnum(host, "sockets"), jnum(host, "numa_nodes"), jnum(host, "cores"),
               jnum(host, "pus"));
        fb_out("memory       %.1f GiB (%.0f bytes)\n", jnum(host, "memory_bytes") / 1073741824.0,
               jnum(host, "memory_bytes"));
    } else {
        fb_out("layout       unknown: %s\n", jstr(host, "topology"));
    }
    fb_out("backend      %s (%s)\n", jstr(jobj(fp, "backend"), "name"),
           jstr(jobj(fp, "backend"), "why"));
    fb_out("collectives  %s (%s)\n", jstr(jobj(fp, "collectives"), "name"),
           jstr(jobj(fp, "collectives"), "why"));
    fb_out("CUDA         driver %s, runtime %s; NCCL %s; hwloc %s\n",
           jstr(jobj(fp, "cuda"), "driver_version"), jstr(jobj(fp, "cuda"), "runtime_version"),
           jstr(jobj(fp, "nccl"), "version"), jstr(jobj(fp, "hwloc"), "version"));
    fb_out("MPI          %s\n", jstr(jobj(fp, "mpi"), "library"));
    if (cJSON_IsString(ib)) {
        fb_out("InfiniBand   %s\n", ib->valuestring);
    } else {
        const cJSON *p;
        cJSON_ArrayForEach(p, ib)
        {
            fb_out("InfiniBand   %s port %.0f: %s, %s %.0fx %s (%.1f Gb/s signalling)\n",
                   jstr(p, "device"), jnum(p, "port"), jstr(p, "state"), jstr(p, "link_layer"),
                   jnum(p, "width"), jstr(p, "speed"), jnum(p, "rate_gbps"));
        }
    }
    fb_out("job          %.0f rank(s) on %.0f node(s)\n", jnum(fp, "nranks"), jnum(fp, "nodes"));

    for (int r = 0; r < n; r++)
        if ((int)strlen(all[r].host) > hostw)
            hostw = (int)strlen(all[r].host);
    fb_out("\n");
    fb_out("rank  %-*s  local  %-24s  %-5s  %-8s  gpu\n", hostw, "host", "cpu binding", "numa",
           "verdict");
    for (int r = 0; r < n; r++) {
        const struct fb_rank_facts *f = &all[r];
        char cpus[FB_CPULIST_LEN + 16], gpu[256];

        if (!f->cpus[0])
            snprintf(cpus, sizeof cpus, "unknown");
        else
            snprintf(cpus, sizeof cpus, "%s%s", f->cpus, f->bound ? "" : " (unbound)");
        if (f->gpu_index >= 0)
            snprintf(gpu, sizeof gpu, "%d %s %s (NUMA %s)", f->gpu_index, f->gpu_name,
                     f->gpu_busid, f->gpu_numa[0] ? f->gpu_numa : "?");
        else
            snprintf(gpu, sizeof gpu, "none (host memory)");
        fb_out("%4d  %-*s  %5d  %-24s  %-5s  %-8s  %s\n", f->rank, hostw, f->host, f->local_rank,
               cpus, f->cpu_numa[0] ? f->cpu_numa : "?", fb_verdict_str(f->binding), gpu);
    }
}

static void print_checks(const struct fb_check *checks, size_t n)
{
    fb_out("\n");
    for (size_t i = 0; i < n; i++) {
        fb_out("%s  %-16s  %s\n", fb_verdict_str(checks[i].verdict), checks[i].name, checks[i].why);
        if (checks[i].fix[0])
            fb_out("      fix: %s\n", checks[i].fix);
    }
}

/* Rank 0: the verdicts on NCCL's log, read before the work (fb_cmd_doctor: a log that cannot be
 * read or is malformed was refused there, exit 2) into r with its status st and message err,
 * printed as checks. Returns the exit code they call for: 1 when a verdict FAILs or memory ran
 * out reading it. A folder without logs is a SKIP: a run with MPI collectives keeps none. */
static int nccl_log_checks(const struct fb_nccl_report *r, fb_status st, const char *err)
{
    struct fb_nccl_verdict v[FB_NCCL_VERDICTS];
    char summary[512];
    int code = 0;

    if (st == FB_ERR_UNSUPPORTED) {
        fb_out("%s  %-16s  %s\n", fb_verdict_str(FB_SKIP), "nccl_log", err);
        return 0;
    }
    if (st != FB_OK) { /* out of memory: a log cut short is never taken as read */
        fb_error("doctor: --nccl-log: %s", err);
        return 1;
    }
    fb_nccl_report_summary(r, summary, sizeof summary);
    fb_out("%s  %-16s  %s\n", fb_verdict_str(r->nccl_lines ? FB_PASS : FB_SKIP), "nccl_log",
           r->nccl_lines ? summary : "no NCCL line in the log (was NCCL_DEBUG=INFO set?)");
    if (r->nccl_lines) {
        if (fb_nccl_verdicts(r, v) == FB_FAIL)
            code = 1;
        for (int i = 0; i < FB_NCCL_VERDICTS; i++)
            fb_out("%s  %-16s  %s\n", fb_verdict_str(v[i].verdict), v[i].check, v[i].text);
    }
    return code;
}

/* Every node judges its own HCAs (one node's port down is the classic multi-node failure);
 * rank 0 keeps the worst, naming the host when there is more than one node. */
static fb_status infiniband_worst(const struct fb_session *s, const struct fb_rank_facts *facts,
                                  struct fb_check *worst)
{
    struct fb_ib_port *ports = NULL;
    struct fb_check mine, *all = NULL;
    size_t n = 0;
    fb_status st = FB_OK;
    int rc, pick = -1;

    memset(&mine, 0, sizeof mine);
    mine.verdict = FB_SKIP;
    if (s->world.local_rank == 0) {
        if ((st = fb_ib_ports(&ports, &n)) == FB_OK) {
            fb_doctor_infiniband(ports, n, &mine);
        } else {
            snprintf(mine.name, sizeof mine.name, "infiniband");
            mine.verdict = FB_WARN;
            snprintf(mine.why, sizeof mine.why, "cannot list InfiniBand ports: %s",
                     fb_status_str(st));
        }
        st = FB_OK;
    }
    if (s->world.rank == 0 && !(all = calloc((size_t)s->world.size, sizeof *all)))
        st = FB_ERR_NOMEM;
    if ((st = fb_world_agree(&s->world, st)) != FB_OK)
        goto out;
    rc = MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0,
                    s->world.comm);
    if ((st = fb_world_agree(&s->world, rc == MPI_SUCCESS ? FB_OK : FB_ERR_MPI)) != FB_OK)
        goto out;
    if (s->world.rank != 0)
        goto out;
    for (int r = 0; r < s->world.size; r++) {
        if (!all[r].name[0])
            continue;
        if (pick < 0 || fb_verdict_worst(all[pick].verdict, all[r].verdict) != all[pick].verdict)
            pick = r;
    }
    if (pick >= 0) {
        *worst = all[pick];
        if (s->world.nodes > 1)
            snprintf(worst->why, sizeof worst->why, "%s: %.190s", facts[pick].host,
                     all[pick].why);
    }
out:
    free(ports);
    free(all);
    return st;
}

/* The verdicts go into the JSON beside the fingerprint ("checks": name, verdict, why, fix), so
 * `report` can show them. false when out of memory. */
static bool add_checks_json(cJSON *fp, const struct fb_check *checks, size_t n)
{
    cJSON *arr = cJSON_AddArrayToObject(fp, "checks");

    if (!arr || !cJSON_AddStringToObject(fp, "doctor_worst",
                                         fb_verdict_str(fb_doctor_worst(checks, n))))
        return false;
    for (size_t i = 0; i < n; i++) {
        cJSON *c = cJSON_CreateObject();
        if (!c || !cJSON_AddItemToArray(arr, c)) {
            cJSON_Delete(c);
            return false;
        }
        if (!cJSON_AddStringToObject(c, "name", checks[i].name) ||
            !cJSON_AddStringToObject(c, "verdict", fb_verdict_str(checks[i].verdict)) ||
            !cJSON_AddStringToObject(c, "why", checks[i].why) ||
            !cJSON_AddStringToObject(c, "fix", checks[i].fix))
            return false;
    }
    return true;
}

/* Before MPI starts (main.c): bad options and --help end here, on every rank, with no MPI
 * (a process started alone would spawn Open MPI's daemon first). -1: go on. */
int fb_cmd_doctor_options(int argc, char **argv)
{
    const char *backend = "auto", *coll = "auto", *json_path = NULL, *nccl_log = NULL;
    bool help = false, self_bind = false;
    char err[256] = "";
    bool ok = parse(argc, argv, &backend, &coll, &json_path, &nccl_log, &self_bind, &help, err,
                    sizeof err);

    return fb_cli_answer_early("doctor", ok, help, err, usage);
}

int fb_cmd_doctor(int argc, char **argv)
{
    const char *backend = "auto", *coll = "auto", *json_path = NULL, *nccl_log = NULL;
    bool help = false, self_bind = false;
    char err[256] = "";
    int rank = 0, code = 0;
    struct fb_session s;
    struct fb_topo *topo = NULL;
    struct fb_rank_facts mine, *all = NULL;
    struct fb_check checks[FB_DOCTOR_MAX_CHECKS], ib;
    size_t nchecks = 0;
    cJSON *fp = NULL;
    fb_status st, log_st = FB_OK;
    struct fb_nccl_report log;
    char log_err[512] = "";

    memset(&log, 0, sizeof log);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* Every rank parses the same argv, so all agree without talking. */
    /* --help and bad options were answered before MPI started (fb_cmd_doctor_options) */
    if (!parse(argc, argv, &backend, &coll, &json_path, &nccl_log, &self_bind, &help, err,
               sizeof err)) {
        if (rank == 0)
            fb_error("doctor: %s", err);
        return 2;
    }
    if (help)
        return 0;
    if (json_path) {
        /* checked before the work, so a path that cannot be written is bad input (exit 2),
         * not a failure after the whole fingerprint; rank 0 writes the file, so rank 0 looks
         * (the others may not see its file system) */
        int bad = rank == 0 &&
                  fb_run_folder_output("--json", json_path, false, err, sizeof err) != FB_OK;
        if (bad)
            fb_error("doctor: %s", err);
        MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (bad)
            return 2;
    }

    if (nccl_log) {
        /* read before the work, once: a log that cannot be read or is malformed is bad input
         * (exit 2) before any check is printed or --json written; rank 0 reads it and judges
         * it after the job's own checks */
        int bad = 0;
        if (rank == 0) {
            log_st = fb_nccl_report_path(nccl_log, &log, log_err, sizeof log_err);
            if (log_st != FB_OK && log_st != FB_ERR_UNSUPPORTED && log_st != FB_ERR_NOMEM) {
                fb_error("doctor: --nccl-log: %s", log_err);
                bad = 1;
            }
        }
        MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (bad) {
            fb_nccl_report_release(&log);
            return 2;
        }
    }

    /* Oversubscription is allowed so that doctor can report it instead of refusing. */
    st = fb_session_open(&s, backend, coll, true);
    if (st != FB_OK) {
        code = fb_status_exit_code(st);
        goto out;
    }
    if (self_bind)
        fb_session_bind_home(&s);
    if (fb_topo_load(&topo, NULL) != FB_OK) {
        fb_warn("cannot load this machine's topology: binding and GPU locality are unknown");
        topo = NULL;
    }
    fb_fingerprint_collect(&s, topo, &mine);
    if ((st = fb_fingerprint_gather(&s, &mine, &all)) != FB_OK) {
        code = fb_status_exit_code(st);
        goto out;
    }
    memset(&ib, 0, sizeof ib);
    if ((st = infiniband_worst(&s, all, &ib)) != FB_OK) {
        code = fb_status_exit_code(st);
        goto out;
    }

    if (rank == 0) {
        const struct fb_doctor_job job = {s.be->name, s.coll ? s.coll->name : NULL,
                                          s.oversubscribed, fb_facts_launcher()};
        nchecks = fb_doctor_checks(&job, all, s.world.size, NULL, 0, checks,
                                   FB_DOCTOR_MAX_CHECKS);
        for (size_t i = 0; i < nchecks; i++)
            if (ib.name[0] && strcmp(checks[i].name, "infiniband") == 0)
                checks[i] = ib;
        if (!(fp = fb_fingerprint_json(&s, topo, all, "doctor"))) {
            code = 1;
        } else {
            print_fingerprint(fp, all, s.world.size);
            print_checks(checks, nchecks);
            if (fb_doctor_worst(checks, nchecks) == FB_FAIL)
                code = 1;
            if (nccl_log) {
                int ncode = nccl_log_checks(&log, log_st, log_err);
                code = ncode > code ? ncode : code;
            }
            if (json_path && !add_checks_json(fp, checks, nchecks))
                code = 1;
            else if (json_path && (st = fb_json_file_write(json_path, fp)) != FB_OK)
                code = fb_status_exit_code(st);
            else if (json_path)
                fb_info("fingerprint written to '%s'", json_path);
        }
    }
    /* All ranks return rank 0's verdict, so a launcher sees one exit code. */
    MPI_Bcast(&code, 1, MPI_INT, 0, s.world.comm);
out:
    fb_nccl_report_release(&log);
    cJSON_Delete(fp);
    free(all);
    fb_topo_free(topo);
    fb_session_close(&s);
    return code;
}
