/* Option parsing for `run`. Every value is checked here; nothing is created before it passes. */
#define _GNU_SOURCE
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "log.h"
#include "mix.h"
#include "profile.h"
#include "profile_find.h"
#include "registry.h"
#include "units.h"

enum {
    OPT_BACKEND = 256, OPT_COLL, OPT_OUT, OPT_FORCE, OPT_MIN, OPT_MAX, OPT_SIZES, OPT_FACTOR,
    OPT_WARMUP, OPT_ITERS, OPT_TRIALS, OPT_TRIAL_MS, OPT_DTYPE, OPT_OVERSUB, OPT_QUIET, OPT_HELP,
    OPT_RANKS, OPT_PAIRS, OPT_MATRIX_BYTES, OPT_LATENCY_BYTES, OPT_FUSION, OPT_NO_NCCL_LOG,
    OPT_CLASSES, OPT_BATCH, OPT_RESOLUTION, OPT_THREADS, OPT_PREFETCH, OPT_DATASET,
    OPT_HOST_MEMORY, OPT_WIRE, OPT_RATE, OPT_PRECISION, OPT_MEMORY_BUDGET, OPT_DEVICE_MEMORY, OPT_DRY_RUN, OPT_SELF_BIND, OPT_OPTIMIZER,
    OPT_TELEMETRY_MS, OPT_FP16_ALLREDUCE, OPT_OVERLAP, OPT_TIMEOUT, OPT_MATRIX,
    OPT_MIX, OPT_SEQUENCE, OPT_SCALE, OPT_COMPUTE_US, /* replay */
    OPT_BEYOND_LLC, OPT_MPI_THREAD,
    OPT_TIMING /* issue 18: OSU's timing */
};

static const struct option run_options[] = {
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"coll", required_argument, NULL, OPT_COLL},
    {"out", required_argument, NULL, OPT_OUT},
    {"force", no_argument, NULL, OPT_FORCE},
    {"min-bytes", required_argument, NULL, OPT_MIN},
    {"max-bytes", required_argument, NULL, OPT_MAX},
    {"sizes", required_argument, NULL, OPT_SIZES},
    {"factor", required_argument, NULL, OPT_FACTOR},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"trials", required_argument, NULL, OPT_TRIALS},
    {"trial-ms", required_argument, NULL, OPT_TRIAL_MS},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"allow-oversubscribe", no_argument, NULL, OPT_OVERSUB},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"help", no_argument, NULL, OPT_HELP},
    {"ranks", required_argument, NULL, OPT_RANKS},
    {"pairs", required_argument, NULL, OPT_PAIRS},
    {"matrix-bytes", required_argument, NULL, OPT_MATRIX_BYTES},
    {"latency-bytes", required_argument, NULL, OPT_LATENCY_BYTES},
    {"fusion", required_argument, NULL, OPT_FUSION},
    {"no-nccl-log", no_argument, NULL, OPT_NO_NCCL_LOG},
    {"classes", required_argument, NULL, OPT_CLASSES},
    {"batch", required_argument, NULL, OPT_BATCH},
    {"resolution", required_argument, NULL, OPT_RESOLUTION},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"prefetch", required_argument, NULL, OPT_PREFETCH},
    {"dataset", required_argument, NULL, OPT_DATASET},
    {"host-memory", required_argument, NULL, OPT_HOST_MEMORY},
    {"wire", required_argument, NULL, OPT_WIRE},
    {"rate", required_argument, NULL, OPT_RATE},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"memory-budget", required_argument, NULL, OPT_MEMORY_BUDGET},
    {"device-memory", required_argument, NULL, OPT_DEVICE_MEMORY},
    {"dry-run", required_argument, NULL, OPT_DRY_RUN},
    {"self-bind", no_argument, NULL, OPT_SELF_BIND},
    {"optimizer", required_argument, NULL, OPT_OPTIMIZER},
    {"telemetry-ms", required_argument, NULL, OPT_TELEMETRY_MS},
    {"fp16-allreduce", no_argument, NULL, OPT_FP16_ALLREDUCE},
    {"overlap", required_argument, NULL, OPT_OVERLAP},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"matrix", required_argument, NULL, OPT_MATRIX},
    {"mix", required_argument, NULL, OPT_MIX},
    {"sequence", no_argument, NULL, OPT_SEQUENCE},
    {"scale", required_argument, NULL, OPT_SCALE},
    {"compute-us", required_argument, NULL, OPT_COMPUTE_US},
    {"beyond-llc", no_argument, NULL, OPT_BEYOND_LLC},
    {"mpi-thread", required_argument, NULL, OPT_MPI_THREAD},
    {"timing", required_argument, NULL, OPT_TIMING},
    {NULL, 0, NULL, 0},
};

void fb_cli_run_usage(void)
{
    printf("usage: fabricbench run [options] [BENCH...]\n"
           "Runs the named benchmarks (default: all, see `fabricbench list`) on every rank of\n"
           "the MPI job; launch with mpirun/srun, or alone for one rank.\n\n"
           "  --backend auto|host|cuda|host-strict\n"
           "                            device memory and copies (auto: cuda when every rank\n"
           "                            sees a GPU, else host; host-strict: host with CUDA's\n"
           "                            rules enforced, for tests, figures not measurements)\n"
           "  --coll auto|nccl|mpi      collectives (auto: nccl on cuda, else mpi)\n"
           "  --out DIR                 results folder (default results/<date>-<time>-<host>)\n"
           "  --force                   reuse an --out folder that already holds a run\n"
           "  --min-bytes SIZE          smallest message of a sweep\n"
           "  --max-bytes SIZE          largest message of a sweep\n"
           "  --factor N                step between sweep sizes (default: 2 allreduce, 4 h2d)\n"
           "  --sizes SIZE[,SIZE...]    measure exactly these sizes instead of a sweep\n"
           "  --warmup N                untimed iterations before timing (default 5)\n"
           "  --iters N                 iterations per trial (default: enough for --trial-ms)\n"
           "  --trials N                timed trials per point; statistics are over these "
           "(default 10)\n"
           "  --trial-ms MS             target length of a trial (default 5)\n"
           "  --timing batch|synced|both  collectives: trials of back-to-back iterations, each\n"
           "                            as long as its slowest rank (batch, the default); or\n"
           "                            OSU's way (synced): a barrier before each iteration,\n"
           "                            each timed alone, the mean, min and max over ranks of\n"
           "                            each rank's mean (time_synced_avg, _min, _max); or both\n"
           "  --dtype float32|float64|int32|float16   element type of allreduce and the\n"
           "                            collectives (all_gather ... reduce), and of an NCCL\n"
           "                            Inspector mix in replay (default float32)\n"
           "  --ranks N[,N...]          rank counts of the scaling curve: allreduce, the\n"
           "                            collectives, densenet_allreduce and step run on the\n"
           "                            first N ranks for each (default 1, 2, 4, ... and all\n"
           "                            ranks)\n"
           "  --pairs A:B[,A:B...]      p2p: the pairs of the size sweep (default 0:1, and 0\n"
           "                            and the first rank of another node)\n"
           "  --matrix-bytes SIZE       p2p: message size of the bandwidth matrices (default 64M)\n"
           "  --latency-bytes SIZE      p2p: message size of the latency matrix (default 8)\n"
           "  --matrix auto|all|sampled p2p: every pair, or a sample (inside nodes, a ring, random\n"
           "                            pairs) above 64 ranks with auto (default auto)\n"
           "  --beyond-llc              h2d: add one size above the last-level cache (the next\n"
           "                            power of two at least 2x it, hwloc) to the all-ranks\n"
           "                            case, so a host copy is also measured from memory\n"
           "  --fusion SIZE|off[,...]   densenet_allreduce: fusion thresholds (default off, 1M,\n"
           "                            4M, 16M, 25M, 64M, 128M; plus one flat buffer always);\n"
           "                            step: its buckets (default 25M, PyTorch DDP's)\n"
           "  --fp16-allreduce          step: gradients on the wire as float16 (Horovod's\n"
           "                            Compression.fp16)\n"
           "  --overlap on|off|both     step: all-reduce buckets during backward (default on);\n"
           "                            replay: ops overlapped with the compute stand-in\n"
           "  --mix FILE                replay: the step's collectives (profiles/mixes/*.mix, or\n"
           "                            NCCL Inspector's JSON, whose type is --dtype's)\n"
           "  --sequence                replay: ops in sequence after the compute (--overlap off)\n"
           "  --scale F                 replay: each op's bytes times F (default 1)\n"
           "  --compute-us US           replay: compute stand-in before each op the mix gives\n"
           "                            none (default 0)\n"
           "  --classes N               densenet_allreduce, compute, memfit, step: classifier\n"
           "                            outputs (default 14, CheXNet's findings)\n"
           "  --batch N[,N...]          pipeline, compute, step: images per batch per rank (default:\n"
           "                            32 on cuda; on host, 8; step: 1, 2, 4, ... up to what\n"
           "                            memfit says fits, at most 4 on host)\n"
           "  --resolution R            pipeline, compute, memfit, step: the model's input side\n"
           "                            (default 224; compute and step on host 64)\n"
           "  --threads N               pipeline, step: decode/augment threads (default: the CPUs\n"
           "                            this rank is bound to; step on host: 1)\n"
           "  --prefetch D              pipeline, step: batches in the ring (default 2 x threads)\n"
           "  --dataset chestxray|imagenet  pipeline, step: 1024x1024 gray PNG (chestxray, the\n"
           "                            default) or 500x375 RGB JPEG (imagenet)\n"
           "  --host-memory pinned|pageable  pipeline: the batches' host memory (default pinned)\n"
           "  --wire uint8|float        pipeline: what is copied (uint8: normalized on the\n"
           "                            device, the default; float: normalized by the workers)\n"
           "  --rate IMG/S[,...]        pipeline: consumer rates for the stall fraction\n"
           "                            (default 460, 1840, 5800 on cuda; 50, 100, 200 on host)\n"
           "  --precision fp16|bf16|fp32  compute, memfit, step: GEMM inputs (default fp16 on\n"
           "                            cuda, fp32 on host); accumulation is always fp32\n"
           "  --memory-budget SIZE      memfit on host: the memory to fit in (default 1G)\n"
           "  --device-memory SIZE|PROFILE  host-strict: a device memory of SIZE, or of the\n"
           "                            profile's gpu_memory (c4140-m: 32G, hgx-h200-8: 141G);\n"
           "                            allocations past it fail as cudaMalloc's out of memory\n"
           "  --dry-run TFLOPS,GBPS     plan only, as on a GPU of that peak and memory bandwidth\n"
           "                            (an H200: 989,4800): each benchmark's points and the\n"
           "                            least time its schedule takes; nothing is measured or\n"
           "                            written (host-strict, whose --device-memory sizes it)\n"
           "  --optimizer sgd|momentum|adam  memfit: optimizer state per weight (default adam)\n"
           "  --no-nccl-log             leave NCCL_DEBUG alone (by default NCCL's INFO log is kept\n"
           "                            in the run folder, one file per rank)\n"
           "  --telemetry-ms MS         GPU telemetry (NVML) sampling interval (default 100;\n"
           "                            0 = off); telemetry.csv in the run folder\n"
           "  --timeout SECONDS         limit of every phase (MPI start, communicator creation,\n"
           "                            each benchmark phase, each collective wait); on expiry\n"
           "                            the ranks that had not arrived are named, the run is\n"
           "                            marked 'timeout' and ends with exit code 3 (default 300,\n"
           "                            or 3 trials of --trial-ms when longer; 0 = none)\n"
           "  --mpi-thread auto|single|serialized\n"
           "                            the MPI thread level asked for (auto, the default:\n"
           "                            serialized when step or replay run, whose all-reduces\n"
           "                            need a communication thread, else single; above single\n"
           "                            Open MPI locks in every call, a cost in every message)\n"
           "  --allow-oversubscribe     measure even with more ranks than GPUs on a node\n"
           "  --self-bind               each rank binds itself to its GPU's socket (no GPU:\n"
           "                            its block of the node's sockets), whatever the launcher\n"
           "                            did; sweep adds it where ranks do not divide over sockets\n"
           "  --quiet                   no per-point progress lines (the tables, the\n"
           "                            headline and the warnings are still printed)\n"
           "  --help                    this text\n\n"
           "SIZE is bytes with an optional binary suffix: K = 2^10, M = 2^20, G = 2^30 (64K,\n"
           "256M, 1G). Bandwidths are decimal: GB/s = 1e9 bytes/s.\n"
           "\n"
           "exit: 0 every benchmark ran, 1 a benchmark failed (the rank and host named), 2 bad\n"
           "input (one line; nothing written; nothing to measure is found once the benchmarks\n"
           "plan, after the folder is made: env.json marked failed), 3 a phase timed out, 4\n"
           "interrupted (SIGINT, SIGTERM: the finished points are kept).\n");
}

void fb_cli_option_error(int c, char **argv, char *err, size_t errlen)
{
    const char *arg = argv[optind - 1];
    bool is_long = strncmp(arg, "--", 2) == 0;
    int name = (int)strcspn(arg, "="); /* a long option's name, without "=VALUE" */

    if (c == ':')
        snprintf(err, errlen, "option '%s' needs a value", arg);
    else if (is_long && optopt) /* known (getopt gives its value), but given "=VALUE" */
        snprintf(err, errlen, "option '%.*s' takes no value", name, arg);
    else if (!is_long && optopt && optopt < 256)
        snprintf(err, errlen, "unknown option '-%c'", optopt);
    else
        snprintf(err, errlen, "unknown option '%.*s'", is_long ? name : (int)strlen(arg), arg);
}

fb_status fb_cli_timeout_parse(const char *text, double *seconds, char *why, size_t whylen)
{
    /* a week: beyond it a limit means nothing; 0 = none */
    return fb_real_parse(text, 0.0, 604800.0, seconds, why, whylen);
}

double fb_cli_timeout_hint(int argc, char **argv, double dflt)
{
    double v = dflt;
    char why[128];

    for (int i = 1; i < argc; i++) {
        const char *text = NULL;
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
            text = argv[i + 1];
        else if (strncmp(argv[i], "--timeout=", 10) == 0)
            text = argv[i] + 10;
        if (text && fb_cli_timeout_parse(text, &v, why, sizeof why) != FB_OK)
            v = dflt;
    }
    return v;
}

int fb_cli_rank_hint(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

int fb_cli_answer_early(const char *cmd, bool parsed, bool help, const char *err,
                        void (*usage)(void))
{
    if (!parsed) {
        if (fb_cli_rank_hint() == 0)
            fb_error("%s: %s", cmd, err);
        return 2;
    }
    if (help) {
        if (fb_cli_rank_hint() == 0)
            usage();
        return 0;
    }
    return -1;
}

static fb_status parse_nonzero_size(const char *text, size_t *bytes, char *why, size_t whylen)
{
    fb_status st = fb_size_parse(text, bytes, why, whylen);

    if (st == FB_OK && *bytes == 0) {
        snprintf(why, whylen, "size '%s' is zero", text);
        st = FB_ERR_USAGE;
    }
    return st;
}

/* --device-memory: a size, or a profile's name (or path) whose [node] gpu_memory gives it. */
static fb_status parse_device_memory(const char *text, size_t *bytes, char *why, size_t whylen)
{
    char path[4096], err[512];
    struct fb_profile *p;
    fb_status st;

    if (text[0] >= '0' && text[0] <= '9')
        return parse_nonzero_size(text, bytes, why, whylen);
    if ((st = fb_profile_find(text, NULL, getenv("FB_PROFILE_PATH"), path, sizeof path, err,
                              sizeof err)) != FB_OK) {
        snprintf(why, whylen, "'%.40s' is neither a size nor a profile: %.170s", text, err);
        return st;
    }
    if (!(p = malloc(sizeof *p)))
        return FB_ERR_NOMEM;
    if (fb_profile_load(path, p, err, sizeof err) != FB_OK) {
        snprintf(why, whylen, "%.220s", err); /* a missing or bad profile: a bad value */
        st = FB_ERR_USAGE;
    } else if (p->gpu_memory <= 0) {
        char shown[300];
        snprintf(why, whylen, "profile %s has no [node] gpu_memory",
                 fb_escape_str(path, 200, shown, sizeof shown));
        st = FB_ERR_USAGE;
    } else {
        *bytes = (size_t)p->gpu_memory;
    }
    free(p);
    return st;
}

/* --dry-run TFLOPS,GBPS: the described GPU's peak and memory bandwidth, both above zero. */
static fb_status parse_described(const char *text, struct fb_options *o, char *why, size_t whylen)
{
    char first[64];
    const char *comma = strchr(text, ',');
    size_t n = comma ? (size_t)(comma - text) : 0;

    if (!comma || n == 0 || n >= sizeof first) {
        snprintf(why, whylen, "'%.60s' is not TFLOPS,GBPS (an H200: 989,4800)", text);
        return FB_ERR_USAGE;
    }
    memcpy(first, text, n);
    first[n] = '\0';
    if (fb_real_parse(first, 0.001, 1e6, &o->dry_tflops, why, whylen) != FB_OK ||
        fb_real_parse(comma + 1, 0.001, 1e7, &o->dry_gbps, why, whylen) != FB_OK)
        return FB_ERR_USAGE;
    o->dry_run = true;
    return FB_OK;
}

/* A buffer's size: not zero, and no more than this machine's memory, so that a size no
 * allocation can satisfy (18446744073709551615, whose page rounding would wrap) is bad input
 * before anything is created or allocated. */
static fb_status parse_buffer_size(const char *text, size_t *bytes, char *why, size_t whylen)
{
    fb_status st = parse_nonzero_size(text, bytes, why, whylen);
    size_t mem = fb_size_machine_memory(), rounded;

    if (st != FB_OK)
        return st;
    if (!fb_size_round_up(*bytes, 1 << 16, &rounded) || (mem && *bytes > mem)) {
        snprintf(why, whylen, "size '%s' is more than this machine's memory (%.1f GiB): it "
                 "cannot be allocated", text, (double)mem / (1 << 30));
        return FB_ERR_USAGE;
    }
    return FB_OK;
}

/* One item of a comma-separated list into slot i. */
typedef fb_status (*item_parser)(const char *item, void *out, size_t i, char *why, size_t whylen);

/* Splits `text` at commas (empty items are errors: "1,,2") and parses each item into `out`, an
 * array of `elem`-byte items. An item equal to an earlier one is refused, never merged: each
 * would be measured twice under one key of results.csv (README.md, "Duplicates"). One rule for
 * every list option (--sizes, --ranks, --pairs, --fusion, --batch, --rate); `noun` names an item
 * in the message, and a byte size (bytes) is shown in bytes, since 1K and 1024 are one size. */
static fb_status parse_list(const char *text, item_parser parse, void *out, size_t elem,
                            const char *noun, bool bytes, size_t *n, char *why, size_t whylen)
{
    char buf[1024];
    const char *item = buf;
    fb_status st;

    if (snprintf(buf, sizeof buf, "%s", text) >= (int)sizeof buf) {
        snprintf(why, whylen, "list is too long");
        return FB_ERR_USAGE;
    }
    *n = 0;
    for (char *p = buf;; p++) {
        bool end = *p == '\0';
        if (*p != ',' && !end)
            continue;
        *p = '\0';
        if (!*item) {
            snprintf(why, whylen, "empty item in '%s'", text);
            return FB_ERR_USAGE;
        }
        if (*n == FB_MAX_SIZES) {
            snprintf(why, whylen, "more than %d items", FB_MAX_SIZES);
            return FB_ERR_USAGE;
        }
        if ((st = parse(item, out, *n, why, whylen)) != FB_OK)
            return st;
        for (size_t j = 0; j < *n; j++) {
            const char *mine = (const char *)out + *n * elem;
            size_t v = 0;
            if (memcmp(mine, (const char *)out + j * elem, elem) != 0)
                continue;
            memcpy(&v, mine, bytes ? sizeof v : 0);
            if (bytes && v > 0)
                snprintf(why, whylen, "%s '%.64s' (%zu bytes) is given twice; each %s is "
                         "measured once", noun, item, v, noun);
            else
                snprintf(why, whylen, "%s '%.64s' is given twice; each %s is measured once",
                         noun, item, noun);
            return FB_ERR_USAGE;
        }
        (*n)++;
        if (end)
            return FB_OK;
        item = p + 1;
    }
}

static fb_status size_item(const char *item, void *out, size_t i, char *why, size_t whylen)
{
    return parse_buffer_size(item, &((size_t *)out)[i], why, whylen);
}

/* A fusion threshold: a size, or "off" (0: one all-reduce per tensor). */
static fb_status threshold_item(const char *item, void *out, size_t i, char *why, size_t whylen)
{
    if (strcmp(item, "off") == 0) {
        ((size_t *)out)[i] = 0;
        return FB_OK;
    }
    return parse_nonzero_size(item, &((size_t *)out)[i], why, whylen);
}

static fb_status ranks_item(const char *item, void *out, size_t i, char *why, size_t whylen)
{
    long v;
    fb_status st = fb_count_parse(item, 1, 1 << 24, &v, why, whylen);

    ((int *)out)[i] = (int)v;
    return st;
}

/* "A:B": rank A sends to rank B. */
static fb_status pair_item(const char *item, void *out, size_t i, char *why, size_t whylen)
{
    int(*pairs)[2] = out;
    char a[32], b[32];
    const char *colon = strchr(item, ':');
    long va, vb;
    fb_status st;

    if (!colon || (size_t)(colon - item) >= sizeof a || strlen(colon + 1) >= sizeof b) {
        snprintf(why, whylen, "'%s' is not a pair A:B of ranks", item);
        return FB_ERR_USAGE;
    }
    snprintf(a, sizeof a, "%.*s", (int)(colon - item), item);
    snprintf(b, sizeof b, "%s", colon + 1);
    if ((st = fb_count_parse(a, 0, 1 << 24, &va, why, whylen)) != FB_OK ||
        (st = fb_count_parse(b, 0, 1 << 24, &vb, why, whylen)) != FB_OK)
        return st;
    if (va == vb) {
        snprintf(why, whylen, "pair '%s' names one rank twice", item);
        return FB_ERR_USAGE;
    }
    pairs[i][0] = (int)va;
    pairs[i][1] = (int)vb;
    return FB_OK;
}

static fb_status batch_item(const char *item, void *out, size_t i, char *why, size_t whylen)
{
    return fb_count_parse(item, 1, 1 << 20, &((long *)out)[i], why, whylen);
}

static fb_status rate_item(const char *item, void *out, size_t i, char *why, size_t whylen)
{
    return fb_real_parse(item, 0.001, 1e9, &((double *)out)[i], why, whylen);
}

const char *const fb_cli_backends[] = {"auto", "host", "cuda", "host-strict", NULL};
const char *const fb_cli_colls[] = {"auto", "nccl", "mpi", NULL};

fb_status fb_cli_choice(const char *text, const char *const *choices, char *why, size_t whylen)
{
    size_t used;

    for (size_t i = 0; choices[i]; i++)
        if (strcmp(text, choices[i]) == 0)
            return FB_OK;
    used = (size_t)snprintf(why, whylen, "'%s' is not one of the choices (use", text);
    for (size_t i = 0; choices[i] && used < whylen; i++)
        used += (size_t)snprintf(why + used, whylen - used, "%s %s", i ? "," : "", choices[i]);
    if (used < whylen)
        snprintf(why + used, whylen - used, ")");
    return FB_ERR_USAGE;
}

static fb_status parse_choice(const char *text, const char *const *choices, char *dst,
                              size_t dstlen, char *why, size_t whylen)
{
    fb_status st = fb_cli_choice(text, choices, why, whylen);

    if (st == FB_OK)
        snprintf(dst, dstlen, "%s", text);
    return st;
}

/* --mix is read before anything is created: bad input names its file and line. */
static fb_status check_mix(const struct fb_options *o, char *err, size_t errlen)
{
    struct fb_mix m;
    fb_status st = fb_mix_read(o->mix, o->dtype, &m, err, errlen);
    const struct fb_mix_op *big = st == FB_OK ? fb_mix_largest(&m) : NULL;
    char where[64] = "", name[80], file[200];

    /* 2^50 bytes: far beyond any memory (replay's own limit is 2^50 elements). The op is named
     * by its file and line; --scale only when one was given. */
    if (big && (double)big->bytes * o->mix_scale > 1125899906842624.0) {
        if (big->line)
            snprintf(where, sizeof where, ":%zu", big->line);
        fb_escape(big->name, strlen(big->name), 40, name, sizeof name);
        fb_escape(o->mix, strlen(o->mix), 120, file, sizeof file);
        if (o->mix_scale == 1.0)
            snprintf(err, errlen, "--mix %s%s: op '%s' (%s) is %zu bytes; replay runs ops of at "
                     "most 2^50 bytes (1125899906842624)", file, where, name,
                     fb_mix_coll_name(big->coll), big->bytes);
        else
            snprintf(err, errlen, "bad value for --scale: %g makes op '%s' of --mix %s%s %.3g "
                     "bytes; replay runs ops of at most 2^50 bytes", o->mix_scale, name, file,
                     where, (double)big->bytes * o->mix_scale);
        st = FB_ERR_USAGE;
    }
    fb_mix_free(&m);
    return st == FB_ERR_IO ? FB_ERR_USAGE : st;
}

fb_status fb_cli_parse_run(int argc, char **argv, struct fb_options *o, int *help, char *err,
                           size_t errlen)
{
    static const char *const dtypes[] = {"float32", "float64", "int32", "float16", NULL};
    static const char *const datasets[] = {"chestxray", "imagenet", NULL};
    static const char *const host_memories[] = {"pinned", "pageable", NULL};
    static const char *const wires[] = {"uint8", "float", NULL};
    static const char *const precisions[] = {"fp16", "bf16", "fp32", NULL};
    static const char *const optimizers[] = {"sgd", "momentum", "adam", NULL};
    static const char *const overlaps[] = {"on", "off", "both", NULL};
    static const char *const matrices[] = {"auto", "all", "sampled", NULL};
    static const char *const mpi_threads[] = {"auto", "single", "serialized", NULL};
    static const char *const timings[] = {"batch", "synced", "both", NULL};
    char why[256] = "", dtype[16];
    int c, idx = -1;
    fb_status st = FB_OK;

    fb_options_defaults(o);
    *help = 0;
    /* 0, not 1: glibc then forgets where it was inside the last argv (a "-xyz" it stopped in),
     * which would otherwise be read again, from an argv that may be gone (found by fuzzing) */
    optind = 0;
    opterr = 0;
    while (st == FB_OK && (c = getopt_long(argc, argv, ":", run_options, &idx)) != -1) {
        switch (c) {
        case OPT_BACKEND: st = parse_choice(optarg, fb_cli_backends, o->backend, sizeof o->backend, why, sizeof why); break;
        case OPT_COLL: st = parse_choice(optarg, fb_cli_colls, o->coll, sizeof o->coll, why, sizeof why); break;
        case OPT_OUT:
            if (!*optarg) {
                snprintf(why, sizeof why, "empty path");
                st = FB_ERR_USAGE;
            } else if (optarg[fb_escape_control_at(optarg)]) {
                /* the folder's last part is the run id: one line of text in every file and
                 * message, which the run's own readers must accept */
                char shown[200];
                snprintf(why, sizeof why, "'%s' holds a control character; name a folder "
                         "without one", fb_escape_str(optarg, 120, shown, sizeof shown));
                st = FB_ERR_USAGE;
            }
            o->out_dir = optarg;
            break;
        case OPT_FORCE: o->force = true; break;
        case OPT_MIN: st = parse_buffer_size(optarg, &o->min_bytes, why, sizeof why); break;
        case OPT_MAX: st = parse_buffer_size(optarg, &o->max_bytes, why, sizeof why); break;
        case OPT_SIZES: st = parse_list(optarg, size_item, o->sizes, sizeof o->sizes[0], "size", true, &o->nsizes, why, sizeof why); break;
        case OPT_RANKS: st = parse_list(optarg, ranks_item, o->groups, sizeof o->groups[0], "rank count", false, &o->ngroups, why, sizeof why); break;
        case OPT_PAIRS: st = parse_list(optarg, pair_item, o->pairs, sizeof o->pairs[0], "pair", false, &o->npairs, why, sizeof why); break;
        case OPT_FUSION:
            st = parse_list(optarg, threshold_item, o->thresholds, sizeof o->thresholds[0],
                            "fusion threshold", true, &o->nthresholds, why, sizeof why);
            break;
        case OPT_MATRIX_BYTES: st = parse_nonzero_size(optarg, &o->matrix_bytes, why, sizeof why); break;
        case OPT_LATENCY_BYTES: st = parse_nonzero_size(optarg, &o->latency_bytes, why, sizeof why); break;
        case OPT_NO_NCCL_LOG: o->no_nccl_log = true; break;
        case OPT_BEYOND_LLC: o->beyond_llc = true; break;
        case OPT_MPI_THREAD:
            st = parse_choice(optarg, mpi_threads, o->mpi_thread, sizeof o->mpi_thread, why, sizeof why);
            break;
        case OPT_CLASSES: {
            long v;
            st = fb_count_parse(optarg, 1, 1000000, &v, why, sizeof why);
            o->classes = (int)v;
            break;
        }
        case OPT_BATCH: st = parse_list(optarg, batch_item, o->batches, sizeof o->batches[0], "batch", false, &o->nbatches, why, sizeof why); break;
        case OPT_RATE: st = parse_list(optarg, rate_item, o->rates, sizeof o->rates[0], "rate", false, &o->nrates, why, sizeof why); break;
        case OPT_RESOLUTION: st = fb_count_parse(optarg, 32, 4096, &o->resolution, why, sizeof why); break;
        case OPT_THREADS: st = fb_count_parse(optarg, 1, 1024, &o->threads, why, sizeof why); break;
        case OPT_PREFETCH: st = fb_count_parse(optarg, 1, 4096, &o->prefetch, why, sizeof why); break;
        case OPT_DATASET: st = parse_choice(optarg, datasets, o->dataset, sizeof o->dataset, why, sizeof why); break;
        case OPT_HOST_MEMORY:
            if ((st = fb_cli_choice(optarg, host_memories, why, sizeof why)) == FB_OK)
                o->pageable = strcmp(optarg, "pageable") == 0;
            break;
        case OPT_WIRE:
            if ((st = fb_cli_choice(optarg, wires, why, sizeof why)) == FB_OK)
                o->wire_float = strcmp(optarg, "float") == 0;
            break;
        case OPT_PRECISION: st = parse_choice(optarg, precisions, o->precision, sizeof o->precision, why, sizeof why); break;
        case OPT_OPTIMIZER: st = parse_choice(optarg, optimizers, o->optimizer, sizeof o->optimizer, why, sizeof why); break;
        case OPT_TELEMETRY_MS: st = fb_count_parse(optarg, 0, 3600000, &o->telemetry_ms, why, sizeof why); break;
        case OPT_FP16_ALLREDUCE: o->fp16_allreduce = true; break;
        case OPT_OVERLAP: st = parse_choice(optarg, overlaps, o->overlap, sizeof o->overlap, why, sizeof why); break;
        case OPT_TIMEOUT: st = fb_cli_timeout_parse(optarg, &o->timeout_s, why, sizeof why); break;
        case OPT_MATRIX: st = parse_choice(optarg, matrices, o->matrix, sizeof o->matrix, why, sizeof why); break;
        case OPT_TIMING:
            st = parse_choice(optarg, timings, o->timing, sizeof o->timing, why, sizeof why);
            break;
        case OPT_MIX:
            if (!*optarg) {
                snprintf(why, sizeof why, "empty path");
                st = FB_ERR_USAGE;
            }
            o->mix = optarg;
            break;
        case OPT_SEQUENCE: snprintf(o->overlap, sizeof o->overlap, "off"); break;
        case OPT_SCALE: st = fb_real_parse(optarg, 1e-12, 1e6, &o->mix_scale, why, sizeof why); break;
        case OPT_COMPUTE_US: st = fb_real_parse(optarg, 0.0, 1e9, &o->compute_us, why, sizeof why); break;
        case OPT_MEMORY_BUDGET: st = parse_nonzero_size(optarg, &o->memory_budget, why, sizeof why); break;
        case OPT_DEVICE_MEMORY: st = parse_device_memory(optarg, &o->device_memory, why, sizeof why); break;
        case OPT_DRY_RUN: st = parse_described(optarg, o, why, sizeof why); break;
        case OPT_SELF_BIND: o->self_bind = true; break;
        case OPT_FACTOR:
            st = fb_count_parse(optarg, 2, 1024, &o->factor, why, sizeof why);
            break;
        case OPT_WARMUP: st = fb_count_parse(optarg, 0, 1000000, &o->warmup, why, sizeof why); break;
        case OPT_ITERS: st = fb_count_parse(optarg, 1, 10000000, &o->iters, why, sizeof why); break;
        case OPT_TRIALS: st = fb_count_parse(optarg, 1, 100000, &o->trials, why, sizeof why); break;
        case OPT_TRIAL_MS: st = fb_real_parse(optarg, 0.001, 600000.0, &o->trial_ms, why, sizeof why); break;
        case OPT_DTYPE:
            if ((st = parse_choice(optarg, dtypes, dtype, sizeof dtype, why, sizeof why)) == FB_OK)
                o->dtype = strcmp(dtype, "float64") == 0   ? FB_DTYPE_FLOAT64
                           : strcmp(dtype, "int32") == 0   ? FB_DTYPE_INT32
                           : strcmp(dtype, "float16") == 0 ? FB_DTYPE_FLOAT16
                                                           : FB_DTYPE_FLOAT32;
            break;
        case OPT_OVERSUB: o->allow_oversubscribe = true; break;
        case OPT_QUIET: o->quiet = true; break;
        case OPT_HELP: *help = 1; return FB_OK;
        default:
            fb_cli_option_error(c, argv, err, errlen);
            return FB_ERR_USAGE;
        }
        if (st != FB_OK) {
            snprintf(err, errlen, "bad value for --%s: %s", run_options[idx].name, why);
            return st;
        }
    }
    if (o->timeout_s < 0)
        o->timeout_s = fb_options_timeout_default(o->trial_ms);
    if (o->min_bytes && o->max_bytes && o->min_bytes > o->max_bytes) {
        snprintf(err, errlen, "--min-bytes is larger than --max-bytes");
        return FB_ERR_USAGE;
    }
    if (o->mix && (st = check_mix(o, err, errlen)) != FB_OK)
        return st;
    for (int i = optind; i < argc; i++) {
        if (!fb_bench_find(argv[i])) {
            snprintf(err, errlen, "unknown benchmark '%s' (see `fabricbench list`)", argv[i]);
            return FB_ERR_USAGE;
        }
        for (int j = 0; j < o->nbench; j++)
            if (strcmp(o->bench[j], argv[i]) == 0) {
                snprintf(err, errlen, "benchmark '%s' is named twice; each benchmark runs once",
                         argv[i]);
                return FB_ERR_USAGE;
            }
        if (o->nbench == FB_MAX_BENCHES) {
            snprintf(err, errlen, "too many benchmarks named");
            return FB_ERR_USAGE;
        }
        o->bench[o->nbench++] = argv[i];
        if (strcmp(argv[i], "replay") == 0 && !o->mix) {
            snprintf(err, errlen, "benchmark 'replay' needs --mix FILE (profiles/mixes/*.mix, "
                     "or NCCL Inspector's JSON)");
            return FB_ERR_USAGE;
        }
    }
    return FB_OK;
}
