/* `fabricbench mix fsdp|horovod|ddp|moe`: a user's model turned into a mix for `run replay --mix`
 * by the generators of the shipped mixes (harness/mix/mix_gen.c), from a list of layer sizes
 * (mix_layers.h) or MoE's shape. Written whole or not at all: to stdout, or atomically to
 * --out. No MPI. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cli.h"
#include "commands.h"
#include "escape.h"
#include "file_read.h"
#include "fusion.h"
#include "log.h"
#include "mix.h"
#include "mix_gen.h"
#include "mix_layers.h"
#include "run_folder.h"
#include "units.h"

static void usage(void)
{
    printf("usage: fabricbench mix fsdp|horovod|ddp --layers FILE [options]\n"
           "       fabricbench mix moe [--moe-layers N] [--tokens N] [--hidden N] [--topk N] "
           "[options]\n"
           "Writes a mix (the file `run replay --mix` replays) of your model, made the way the\n"
           "shipped mixes of profiles/mixes are (docs/benchmarks/replay.md):\n"
           "  fsdp     an FSDP (ZeRO-3) step: per unit an all-gather forward, and backward, last\n"
           "           unit first, an all-gather and a reduce-scatter of its gradients\n"
           "  horovod  data parallel: the gradients, last layer first, fused greedily into\n"
           "           all-reduces of at most --fusion bytes (Horovod's tensor fusion)\n"
           "  ddp      data parallel as PyTorch DDP buckets it: the gradients, last layer first,\n"
           "           each bucket closed once it reaches --first-bucket bytes (the first) or\n"
           "           --bucket-cap bytes (the others), its last tensor in it\n"
           "  moe      a mixture of experts' all-to-alls: a dispatch and a combine per MoE layer\n"
           "           forward, their gradients backward\n"
           "FILE lists the model's layers in forward order, one a line: COUNT [NAME], COUNT its\n"
           "elements (parameters; decimal digits), NAME optional (letters, digits, _ . - / : [ ],\n"
           "at most 40 bytes); '#' starts a comment. For fsdp a line is an FSDP unit, for horovod\n"
           "and ddp a gradient tensor.\n\n"
           "  --layers FILE     fsdp, horovod, ddp: the list of layer sizes\n"
           "  --dtype float32|float64|int32|float16|int8\n"
           "                    the elements' type (default float16 for fsdp and moe, float32\n"
           "                    for horovod and ddp)\n"
           "  --fusion SIZE|off horovod: the fusion threshold in bytes, K/M/G binary (default\n"
           "                    128M, Horovod's since 0.21; off: an all-reduce per tensor)\n"
           "  --bucket-cap SIZE ddp: the limit of every bucket but the first (default 25M, DDP's\n"
           "                    bucket_cap_mb)\n"
           "  --first-bucket SIZE\n"
           "                    ddp: the first bucket's limit (default 1M, DDP's\n"
           "                    first_bucket_bytes; with --bucket-cap alone, that cap, as DDP\n"
           "                    does when bucket_cap_mb is given)\n"
           "  --moe-layers N    moe: MoE layers (default 32)\n"
           "  --tokens N        moe: tokens per rank (default 4096)\n"
           "  --hidden N        moe: the hidden size (default 4096)\n"
           "  --topk N          moe: experts per token (default 2)\n"
           "  --comment TEXT    the comment lines at the top (default: what made the file)\n"
           "  --out FILE        write FILE (atomically) instead of stdout\n"
           "  --help            this text\n\n"
           "exit: 0 written, 1 the output could not be written, 2 bad input (one line naming\n"
           "the option or FILE:LINE; nothing written)\n");
}

enum kind { FSDP, HOROVOD, DDP, MOE };
static const char *const kinds[] = {"fsdp", "horovod", "ddp", "moe"};
enum { OPT_LAYERS = 256, OPT_DTYPE, OPT_FUSION, OPT_MOE_LAYERS, OPT_TOKENS, OPT_HIDDEN,
       OPT_TOPK, OPT_COMMENT, OPT_OUT, OPT_BUCKET_CAP, OPT_FIRST_BUCKET };

struct mix_args {
    enum kind kind;
    const char *layers, *comment, *out;
    enum fb_dtype dtype;
    bool dtype_set, fusion_set, moe_set, ddp_set[2];
    size_t threshold, ddp[2]; /* --first-bucket, --bucket-cap */
    long moe[4]; /* layers, tokens, hidden, top-k */
};

/* The length of text's longest line, its newline aside. */
static size_t longest_line(const char *text)
{
    size_t most = 0;

    while (*text) {
        size_t n = strcspn(text, "\n");
        most = n > most ? n : most;
        text += n + (text[n] == '\n');
    }
    return most;
}

/* The command line as given (before getopt permutes argv), for the default comment: each
 * argument escaped (escape.h), so no control byte of one reaches the file or the terminal. */
static char *command_line(int argc, char **argv)
{
    size_t len = sizeof "fabricbench", used;
    char *s;

    for (int i = 0; i < argc; i++)
        len += 4 * strlen(argv[i]) + 1;
    if (!(s = malloc(len)))
        return NULL;
    used = (size_t)snprintf(s, len, "fabricbench");
    for (int i = 0; i < argc && used + 1 < len; i++) {
        s[used++] = ' ';
        fb_escape_str(argv[i], 0, s + used, len - used);
        used += strlen(s + used);
    }
    return s;
}

/* The default comment: what the file is and the command that made it. */
static char *default_comment(const char *kind, const char *cmdline, const struct fb_mix *m)
{
    size_t len = strlen(cmdline) + 160;
    char *s = malloc(len);
    double total = 0.0; /* ops of up to 1e18 bytes each: their sum may pass size_t */

    for (size_t i = 0; i < m->nops; i++)
        total += (double)m->ops[i].bytes;
    if (s)
        snprintf(s, len, "%s step of %zu op%s, %.17g bytes in all\nmade by: %s", kind, m->nops,
                 m->nops == 1 ? "" : "s", total, cmdline);
    return s;
}

/* Parses the options; 0 to go on, else the exit code (the error printed). */
static int parse(int argc, char **argv, struct mix_args *a)
{
    static const struct option options[] = {
        {"layers", required_argument, NULL, OPT_LAYERS},
        {"dtype", required_argument, NULL, OPT_DTYPE},
        {"fusion", required_argument, NULL, OPT_FUSION},
        {"moe-layers", required_argument, NULL, OPT_MOE_LAYERS},
        {"tokens", required_argument, NULL, OPT_TOKENS},
        {"hidden", required_argument, NULL, OPT_HIDDEN},
        {"topk", required_argument, NULL, OPT_TOPK},
        {"comment", required_argument, NULL, OPT_COMMENT},
        {"out", required_argument, NULL, OPT_OUT},
        {"first-bucket", required_argument, NULL, OPT_FIRST_BUCKET},
        {"bucket-cap", required_argument, NULL, OPT_BUCKET_CAP},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const char *const moe_opts[] = {"--moe-layers", "--tokens", "--hidden", "--topk"};
    char why[256];
    int c;

    optind = 0; /* a full restart of getopt (see cli.c) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":", options, NULL)) != -1) {
        switch (c) {
        case OPT_LAYERS: a->layers = optarg; break;
        case OPT_COMMENT: {
            /* comment lines in the file (and on stdout): line breaks and TABs, no other
             * control character */
            size_t at = 0;
            while (optarg[at += fb_escape_control_at(optarg + at)] == '\n' || optarg[at] == '\t')
                at++;
            if (optarg[at]) {
                char culprit[16];
                fb_escape(optarg + at, (unsigned char)optarg[at] == 0xc2 ? 2 : 1, 0, culprit,
                          sizeof culprit);
                fb_error("mix: bad value for --comment: control character %s at byte %zu",
                         culprit, at + 1);
                return 2;
            }
            a->comment = optarg;
            break;
        }
        case OPT_OUT: a->out = optarg; break;
        case OPT_DTYPE:
            if (!fb_mix_dtype_parse(optarg, &a->dtype)) {
                fb_error("mix: bad value for --dtype: '%s' (float32, float64, int32, float16, "
                         "int8)", optarg);
                return 2;
            }
            a->dtype_set = true;
            break;
        case OPT_FUSION:
            a->fusion_set = true;
            a->threshold = FB_FUSION_OFF;
            if (strcmp(optarg, "off") == 0)
                break;
            if (fb_size_parse(optarg, &a->threshold, why, sizeof why) != FB_OK) {
                fb_error("mix: bad value for --fusion: %s", why);
                return 2;
            }
            if (a->threshold == 0 || a->threshold > FB_MIX_MAX_BYTES) {
                fb_error("mix: bad value for --fusion: '%s' is not 1 byte to 1e18 bytes "
                         "('off': no fusion)", optarg);
                return 2;
            }
            break;
        case OPT_FIRST_BUCKET: case OPT_BUCKET_CAP: {
            const char *name = c == OPT_FIRST_BUCKET ? "--first-bucket" : "--bucket-cap";
            size_t *v = &a->ddp[c == OPT_BUCKET_CAP];
            if (fb_size_parse(optarg, v, why, sizeof why) != FB_OK) {
                fb_error("mix: bad value for %s: %s", name, why);
                return 2;
            }
            if (*v == 0 || *v > FB_MIX_MAX_BYTES) {
                fb_error("mix: bad value for %s: '%s' is not 1 byte to 1e18 bytes", name,
                         optarg);
                return 2;
            }
            a->ddp_set[c == OPT_BUCKET_CAP] = true;
            break;
        }
        case OPT_MOE_LAYERS: case OPT_TOKENS: case OPT_HIDDEN: case OPT_TOPK:
            /* layers: 4 ops each, and replay reads at most a 64 MiB mix (fb_file_cap) */
            if (fb_count_parse(optarg, 1, c == OPT_MOE_LAYERS ? 100000L : 1000000000L,
                               &a->moe[c - OPT_MOE_LAYERS], why, sizeof why) != FB_OK) {
                fb_error("mix: bad value for %s: %s", moe_opts[c - OPT_MOE_LAYERS], why);
                return 2;
            }
            a->moe_set = true;
            break;
        case 'h': usage(); return -1;
        default:
            fb_cli_option_error(c, argv, why, sizeof why);
            fb_error("mix: %s", why);
            return 2;
        }
    }
    if (optind >= argc) {
        fb_error("mix: which mix? fsdp, horovod, ddp or moe (see `fabricbench mix --help`)");
        return 2;
    }
    if (optind + 1 < argc) {
        fb_error("mix: unexpected argument '%s'", argv[optind + 1]);
        return 2;
    }
    if (strcmp(argv[optind], "fsdp") == 0)
        a->kind = FSDP;
    else if (strcmp(argv[optind], "horovod") == 0)
        a->kind = HOROVOD;
    else if (strcmp(argv[optind], "ddp") == 0)
        a->kind = DDP;
    else if (strcmp(argv[optind], "moe") == 0)
        a->kind = MOE;
    else {
        char shown[80];
        fb_escape_str(argv[optind], 40, shown, sizeof shown);
        fb_error("mix: unknown mix '%s' (fsdp, horovod, ddp, moe)", shown);
        return 2;
    }
    if (a->kind != MOE && !a->layers) {
        fb_error("mix: %s needs --layers FILE (the model's layer sizes)", argv[optind]);
        return 2;
    }
    if (a->kind == MOE && a->layers) {
        fb_error("mix: --layers is for fsdp, horovod and ddp; moe takes --moe-layers N");
        return 2;
    }
    if (a->kind != HOROVOD && a->fusion_set) {
        fb_error("mix: --fusion applies to horovod only");
        return 2;
    }
    if (a->kind != DDP && (a->ddp_set[0] || a->ddp_set[1])) {
        fb_error("mix: --first-bucket and --bucket-cap apply to ddp only");
        return 2;
    }
    if (a->kind != MOE && a->moe_set) {
        fb_error("mix: --moe-layers, --tokens, --hidden and --topk apply to moe only");
        return 2;
    }
    /* DDP(bucket_cap_mb=X) makes X the first bucket's limit too (torch/nn/parallel/
     * distributed.py: first_bucket_bytes is 1 MiB only while bucket_cap_mb is the default) */
    if (a->ddp_set[1] && !a->ddp_set[0])
        a->ddp[0] = a->ddp[1];
    if (!a->dtype_set)
        a->dtype = a->kind == HOROVOD || a->kind == DDP ? FB_DTYPE_FLOAT32 : FB_DTYPE_FLOAT16;
    return 0;
}

/* The mix of a's kind; 0, or the exit code (the error printed). */
static int generate(const struct mix_args *a, struct fb_mix *m)
{
    size_t es = fb_dtype_size(a->dtype), bytes;
    struct fb_mix_layers l = {0};
    char err[1024];
    fb_status st;
    int rc = 0;

    if (a->kind == MOE) {
        if (!fb_size_mul((size_t)a->moe[1], (size_t)a->moe[2], &bytes) ||
            !fb_size_mul(bytes, (size_t)a->moe[3], &bytes) || !fb_size_mul(bytes, es, &bytes) ||
            bytes > FB_MIX_MAX_BYTES) {
            fb_error("mix: --tokens x --topk x --hidden elements of %s are more than a mix op "
                     "may hold (1e18 bytes)", fb_mix_dtype_name(a->dtype));
            return 2;
        }
        st = fb_mix_moe((size_t)a->moe[0], (size_t)a->moe[1], (size_t)a->moe[2],
                        (size_t)a->moe[3], a->dtype, m);
        goto out;
    }
    st = fb_mix_layers_read(a->layers, FB_MIX_MAX_BYTES / es, fb_mix_dtype_name(a->dtype), &l,
                            err, sizeof err);
    if (st != FB_OK) {
        fb_error("mix: %s", st == FB_ERR_NOMEM ? "out of memory reading the layers" : err);
        return st == FB_ERR_NOMEM ? 1 : 2;
    }
    if (a->kind == FSDP) {
        const char **names = calloc(l.n, sizeof *names);
        if (!names) {
            st = FB_ERR_NOMEM;
            goto out;
        }
        for (size_t i = 0; i < l.n; i++)
            names[i] = l.names[i][0] ? l.names[i] : NULL;
        st = fb_mix_fsdp(l.elements, names, l.n, a->dtype, m);
        free(names);
    } else {
        /* the list is in forward order; gradients become ready last layer first */
        for (size_t i = 0; i < l.n / 2; i++) {
            size_t t = l.elements[i];
            l.elements[i] = l.elements[l.n - 1 - i];
            l.elements[l.n - 1 - i] = t;
        }
        if (a->kind == HOROVOD) {
            /* a bucket of several tensors stays within the threshold, itself within 1e18 */
            st = fb_mix_horovod(l.elements, l.n, a->dtype, a->threshold, m);
        } else if ((st = fb_mix_ddp(l.elements, l.n, a->dtype, a->ddp[0], a->ddp[1], m)) ==
                   FB_ERR_USAGE) {
            /* the layers are each within 1e18 bytes; a bucket passes its cap by its last */
            char shown[600];
            fb_escape_str(a->layers, 0, shown, sizeof shown);
            fb_error("mix: %s: a DDP bucket would hold more than a mix op may (1e18 bytes): a "
                     "smaller --first-bucket or --bucket-cap", shown);
            fb_mix_layers_free(&l);
            return 2;
        }
    }
out:
    fb_mix_layers_free(&l);
    if (st == FB_ERR_NOMEM) {
        fb_error("mix: out of memory");
        rc = 1;
    } else if (st != FB_OK) {
        fb_error("mix: %s", fb_status_str(st));
        rc = 2;
    }
    return rc;
}

int fb_cmd_mix(int argc, char **argv)
{
    struct mix_args a = {.threshold = (size_t)128 << 20,
                         .ddp = {(size_t)1 << 20, (size_t)25 << 20},
                         .moe = {32, 4096, 4096, 2}};
    struct fb_mix m = {0};
    char *comment = NULL, *text = NULL, *cmdline = command_line(argc, argv);
    int rc = cmdline ? parse(argc, argv, &a) : 1;

    if (rc) {
        if (!cmdline)
            fb_error("mix: out of memory");
        free(cmdline);
        return rc < 0 ? 0 : rc;
    }
    if (a.out) {
        /* a link, a device, a FIFO, a folder or a missing folder: refused before the work (the
         * file is renamed over: as root, --out /dev/null replaced the system's) */
        char why[1400];
        if (fb_run_folder_output("--out", a.out, false, why, sizeof why) != FB_OK) {
            char shown[1600];
            fb_error("mix: %s", fb_escape_str(why, 0, shown, sizeof shown));
            rc = 2;
            goto out;
        }
    }
    if ((rc = generate(&a, &m)) != 0)
        goto out;
    if (!a.comment && !(comment = default_comment(kinds[a.kind], cmdline, &m))) {
        fb_error("mix: out of memory");
        rc = 1;
        goto out;
    }
    if (fb_mix_format(&m, a.comment ? a.comment : comment, &text) != FB_OK) {
        fb_error("mix: out of memory");
        rc = 1;
        goto out;
    }
    /* nothing replay would refuse is written: the whole file and each line within its caps */
    if (strlen(text) > fb_file_cap(FB_FILE_MIX) || longest_line(text) >= FB_FILE_LINE_MAX) {
        fb_error("mix: the mix would be %zu bytes with a line of %zu, more than `run replay "
                 "--mix` reads (%zu bytes, lines under %d): fewer layers or a shorter --comment",
                 strlen(text), longest_line(text), fb_file_cap(FB_FILE_MIX), FB_FILE_LINE_MAX);
        rc = 2;
        goto out;
    }
    if (a.out) {
        rc = fb_atomic_write(a.out, text, strlen(text)) == FB_OK ? 0 : 1;
    } else if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
        fb_error("mix: cannot write the mix to stdout");
        rc = 1;
    }
out:
    free(text);
    free(comment);
    free(cmdline);
    fb_mix_free(&m);
    return rc;
}
