/* `run` option parsing: good values land in the options, each kind of bad input is refused
 * with a message that names the option. */
#include <string.h>

#include "cli.h"
#include "test.h"

static fb_status parse(struct fb_options *o, char *err, const char *a1, const char *a2,
                       const char *a3)
{
    char *argv[5] = {"run", (char *)a1, (char *)a2, (char *)a3, NULL};
    int argc = 1 + (a1 != NULL) + (a2 != NULL) + (a3 != NULL), help = 0;
    err[0] = '\0';
    return fb_cli_parse_run(argc, argv, o, &help, err, 256);
}

static void bad(const char *a1, const char *a2, const char *a3, const char *msg_part)
{
    struct fb_options o;
    char err[256];
    CHECK(parse(&o, err, a1, a2, a3) == FB_ERR_USAGE);
    if (!strstr(err, msg_part)) {
        fprintf(stderr, "message '%s' lacks '%s'\n", err, msg_part);
        fb_test_failures++;
    }
}

int main(void)
{
    struct fb_options o;
    char err[256];

    CHECK(parse(&o, err, NULL, NULL, NULL) == FB_OK);
    CHECK(o.nbench == 0 && o.trials == 10 && o.warmup == 5 && o.iters == 0);
    CHECK(strcmp(o.backend, "auto") == 0 && strcmp(o.coll, "auto") == 0);

    /* step's options: overlap on by default, fp32 gradients on the wire */
    CHECK(strcmp(o.overlap, "on") == 0 && !o.fp16_allreduce);
    CHECK(parse(&o, err, "step", "--overlap", "both") == FB_OK);
    CHECK(strcmp(o.overlap, "both") == 0);
    CHECK(parse(&o, err, "--fp16-allreduce", "--overlap=off", NULL) == FB_OK);
    CHECK(o.fp16_allreduce && strcmp(o.overlap, "off") == 0);
    bad("--overlap", "sometimes", NULL, "bad value for --overlap");

    /* issue 29: a device memory for host-strict, a size or a profile's gpu_memory (the profile
     * lookup is cli_messages' and memfit_host's: it needs the installed profiles); a dry run's
     * described GPU */
    CHECK(o.device_memory == 0 && !o.dry_run);
    CHECK(parse(&o, err, "--device-memory", "32G", "--dry-run=989,4800") == FB_OK);
    CHECK(o.device_memory == (size_t)32 << 30 && o.dry_run && o.dry_tflops == 989 &&
          o.dry_gbps == 4800);
    bad("--device-memory", "0", NULL, "size '0' is zero");
    bad("--dry-run", "989", NULL, "'989' is not TFLOPS,GBPS");
    bad("--dry-run", ",4800", NULL, "is not TFLOPS,GBPS");
    bad("--dry-run", "989,-1", NULL, "bad value for --dry-run");

    CHECK(parse(&o, err, "allreduce", "--max-bytes", "1M") == FB_OK);
    CHECK(o.nbench == 1 && strcmp(o.bench[0], "allreduce") == 0 && o.max_bytes == 1048576);
    CHECK(parse(&o, err, "--sizes", "8,27872824,1K", "--trials=3") == FB_OK);
    CHECK(o.nsizes == 3 && o.sizes[1] == 27872824 && o.sizes[2] == 1024 && o.trials == 3);
    CHECK(parse(&o, err, "--backend", "host", "--dtype=int32") == FB_OK);
    CHECK(strcmp(o.backend, "host") == 0 && o.dtype == FB_DTYPE_INT32);

    /* Issue 3's options: rank counts, pairs, fusion thresholds, matrix sizes, classes. */
    CHECK(parse(&o, err, "--ranks", "1,3,8", "--pairs=0:1,3:2") == FB_OK);
    CHECK(o.ngroups == 3 && o.groups[0] == 1 && o.groups[1] == 3 && o.groups[2] == 8);
    CHECK(o.npairs == 2 && o.pairs[1][0] == 3 && o.pairs[1][1] == 2);
    CHECK(parse(&o, err, "--fusion", "off,25M,128M", "--dtype=float16") == FB_OK);
    CHECK(o.nthresholds == 3 && o.thresholds[0] == 0 && o.thresholds[1] == 25u << 20 &&
          o.thresholds[2] == 128u << 20 && o.dtype == FB_DTYPE_FLOAT16);
    CHECK(parse(&o, err, "--matrix-bytes", "4M", "--classes=1000") == FB_OK);
    CHECK(o.matrix_bytes == 4u << 20 && o.classes == 1000 && o.latency_bytes == 0);
    CHECK(parse(&o, err, NULL, NULL, NULL) == FB_OK && o.classes == 14 && o.ngroups == 0);
    bad("--ranks", "0", NULL, "out of range");
    bad("--ranks", "2,,4", NULL, "empty item");
    bad("--pairs", "0-1", NULL, "not a pair A:B");
    bad("--pairs", "2:2", NULL, "names one rank twice");
    bad("--pairs", "0:x", NULL, "not a whole number");
    /* duplicates are refused, naming the one given twice (never measured twice) */
    bad("h2d", "h2d", NULL, "benchmark 'h2d' is named twice");
    bad("h2d", "allreduce", "h2d", "benchmark 'h2d' is named twice");
    bad("--sizes", "1K,1K", NULL, "bad value for --sizes: size '1K' (1024 bytes) is given twice");
    bad("--sizes", "1K,4K,1024", NULL, "size '1024' (1024 bytes) is given twice");
    bad("--pairs", "0:1,0:1", NULL, "bad value for --pairs: pair '0:1' is given twice");
    bad("--ranks", "2,2", NULL, "bad value for --ranks: rank count '2' is given twice");
    bad("--batch", "32,16,32", NULL, "bad value for --batch: batch '32' is given twice");
    /* one rule for every list option (issue 30: --fusion and --rate took duplicates and
     * measured them twice under one key) */
    bad("--fusion", "4M,4194304", NULL,
        "bad value for --fusion: fusion threshold '4194304' (4194304 bytes) is given twice");
    bad("--fusion", "off,1M,off", NULL, "bad value for --fusion: fusion threshold 'off' is given twice");
    bad("--rate", "100,50,100.0", NULL, "bad value for --rate: rate '100.0' is given twice");
    CHECK(parse(&o, err, "--pairs", "0:1,1:0", NULL) == FB_OK); /* two directions: two pairs */
    CHECK(o.npairs == 2);
    CHECK(parse(&o, err, "--sizes", "1K,1025", NULL) == FB_OK);
    CHECK(o.nsizes == 2);
    bad("--fusion", "on", NULL, "--fusion");
    bad("--classes", "0", NULL, "out of range");
    bad("--latency-bytes", "0", NULL, "zero");

    bad("--max-bytes", "12Q", NULL, "--max-bytes");
    bad("--max-bytes", "12Q", NULL, "unknown suffix");
    bad("--trials", "-3", NULL, "out of range");
    bad("--trials", "0", NULL, "--trials");
    bad("--iters", "ten", NULL, "not a whole number");
    bad("--bogus", NULL, NULL, "unknown option '--bogus'");
    bad("--out", NULL, NULL, "needs a value");
    bad("--backend", "gpu", NULL, "'gpu' is not one of the choices");
    bad("nosuchbench", NULL, NULL, "unknown benchmark 'nosuchbench'");
    bad("--min-bytes", "2M", "--max-bytes=1M", "larger than");
    bad("--sizes", ",", NULL, "empty item");
    bad("--sizes", "8,0", NULL, "zero");
    bad("--min-bytes", "0", NULL, "zero");
    bad("--factor", "1", NULL, "out of range");

    /* A parse that stopped inside "-xyz" leaves nothing for the next one (getopt's place
     * inside an argument was kept, and the next parse read on from it: found by fuzzing). */
    bad("-xyz", NULL, NULL, "unknown option '-x'");
    CHECK(parse(&o, err, "--trials", "3", NULL) == FB_OK && o.trials == 3);
    bad("-pr", NULL, NULL, "unknown option '-p'");
    bad("-pr", NULL, NULL, "unknown option '-p'");
    TEST_DONE();
}
