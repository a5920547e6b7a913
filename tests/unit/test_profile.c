/* Hardware profiles: a good profile's values, each malformation named with its line, and every
 * profile shipped in profiles/ (the folder is argv[1]) loads. */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile.h"
#include "profile_find.h"
#include "test.h"

static const char good[] =
    "; a comment\n"
    "[profile]\n"
    "name = t4\n"
    "description = four test GPUs\n"
    "[node]\n"
    "gpus = 4\n"
    "gpu_model = V100-SXM2 ; inline comment\n"
    "gpu_memory = 32G\n"
    "[p2p]\n"
    "min_gbps.nvlink = 40\n"
    "min_gbps.pcie-switch = 11.5\n"
    "[h2d]\n"
    "min_pinned_gbps_per_gpu_all = 2.75\n"
    "bytes = 67108864\n"
    "[allreduce]\n"
    "busbw_gbps.27872824.4 = 30\n"
    "busbw_gbps.268435456.8 = 10\n"
    "[compute]\n"
    "min_tflops = 12.5\n"
    "[transports]\n"
    "intra = p2p\n"
    "inter = ib\n"
    "gdrdma = required\n"
    "[infiniband]\n"
    "ports = 1\n"
    "rate_gbps = 100\n"
    "[binding]\n"
    "required = yes\n"
    "[noise]\n"
    "max_spread_pct = 15\n"
    "min_samples = 5\n";

static void good_values(void)
{
    struct fb_profile p;
    char err[512] = "";

    CHECK(fb_profile_parse(good, "good.ini", &p, err, sizeof err) == FB_OK);
    CHECK_STR(err, "");
    CHECK_STR(p.name, "t4");
    CHECK_STR(p.description, "four test GPUs");
    CHECK(p.gpus == 4);
    CHECK_STR(p.gpu_model, "V100-SXM2");
    CHECK(p.gpu_memory == 32LL << 30);
    CHECK(p.np2p == 2);
    CHECK_STR(p.p2p[0].link, "nvlink");
    CHECK_NEAR(p.p2p[0].min_gbps, 40, 0);
    CHECK_STR(p.p2p[1].link, "pcie-switch");
    CHECK_NEAR(p.p2p[1].min_gbps, 11.5, 0);
    CHECK_NEAR(p.h2d_min_gbps, 2.75, 0);
    CHECK(p.h2d_bytes == 67108864);
    CHECK(p.nbusbw == 2);
    CHECK(p.busbw[0].bytes == 27872824 && p.busbw[0].ranks == 4);
    CHECK_NEAR(p.busbw[0].min_gbps, 30, 0);
    CHECK(p.busbw[1].bytes == 268435456 && p.busbw[1].ranks == 8);
    CHECK_STR(p.allreduce_case, "out_of_place");
    CHECK_STR(p.allreduce_dtype, "float32");
    CHECK_NEAR(p.compute_min_tflops, 12.5, 0);
    CHECK_STR(p.compute_case, "step_ours");
    CHECK_STR(p.intra, "p2p");
    CHECK_STR(p.inter, "ib");
    CHECK(p.gdrdma == FB_GDR_REQUIRED);
    CHECK(p.ib_ports == 1);
    CHECK_NEAR(p.ib_rate_gbps, 100, 0);
    CHECK(p.binding_required);
    CHECK_NEAR(p.max_spread_pct, 15, 0);
    CHECK(p.min_samples == 5);

    /* unnamed: the file's base name stands for it; what is not asked stays unset */
    CHECK(fb_profile_parse("[compute]\nmin_tflops = 1\n", "dir/site-a.ini", &p, err,
                           sizeof err) == FB_OK);
    CHECK_STR(p.name, "site-a");
    CHECK(p.gpus == -1 && p.h2d_min_gbps < 0 && p.nbusbw == 0 && p.ib_ports == -1);
    CHECK(p.min_samples == 3 && !p.binding_required && p.gdrdma == FB_GDR_UNSET);
}

/* A malformed profile is refused with "name:line: ..." naming what was wrong. */
static void refused(const char *text, const char *where, const char *what)
{
    struct fb_profile p;
    char err[512] = "";

    CHECK(fb_profile_parse(text, "bad.ini", &p, err, sizeof err) == FB_ERR_USAGE);
    CHECK_HAS(err, where);
    CHECK_HAS(err, what);
}

static void malformed(void)
{
    refused("[node]\ngpus = 4\nflavour = red\n", "bad.ini:3:", "unknown key 'flavour' in [node]");
    refused("[node]\ngpus = four\n", "bad.ini:2:", "gpus = 'four'");
    refused("[node]\ngpus = 4x\n", "bad.ini:2:", "expected a whole number");
    refused("[node]\ngpu_memory = lots\n", "bad.ini:2:", "gpu_memory = 'lots': expected a size");
    refused("[node]\ngpu_memory = 0\n", "bad.ini:2:", "expected a size such as 32G (zero)");
    refused("[compute]\nmin_tflops = 1e999\n", "bad.ini:2:", "expected a number");
    refused("[compute]\nmin_tflops = -3\n", "bad.ini:2:", "expected a number >= 0");
    refused("[compute]\nmin_tflops = 1\n\n[gpu]\ncount = 4\n", "bad.ini:4:",
            "unknown section [gpu]");
    refused("[compute]\nmin_tflops = 1\n[empty_unknown]\n", "bad.ini:3:",
            "unknown section [empty_unknown]");
    /* an indented line is no continuation of the key above (it read as that key given twice) */
    refused("[node]\ngpus = 4\n  8\n", "bad.ini:3:", "an indented line");
    refused("[allreduce]\nbusbw_gbps.4194304.2 : 0.01\n", "bad.ini:2:",
            "':' does not separate a key from its value here");
    /* (an indented [section] header is still one: inih reads it so) */
    refused("  [gpu]\ncount = 4\n", "bad.ini:1:", "unknown section [gpu]");
    /* a name past any known one's length is unknown, not skipped: refused at its own line */
    refused("[aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n"
            "[allreduce]\nbusbw_gbps.4194304.2 = 0.01\n",
            "bad.ini:1:", "unknown section [" "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" "...]");
    refused("[compute]\nmin_tflops = 1\nmin_tflops = 2\n", "bad.ini:3:",
            "'min_tflops' given twice");
    refused("[compute]\nmin_tflops = 1\nthis is not ini\n", "bad.ini:3:", "not a [section]");
    refused("[compute]\nmin_tflops = 1\n[node\n", "bad.ini:3:", "not a [section]");
    refused("gpus = 4\n", "bad.ini:1:", "before any [section]");
    refused("[p2p]\nmin_gbps.warp = 3\n", "bad.ini:2:", "unknown key 'min_gbps.warp'");
    refused("[allreduce]\nbusbw_gbps.28M.4 = 3\n", "bad.ini:2:", "busbw_gbps.<bytes>.<ranks>");
    refused("[allreduce]\nbusbw_gbps.1024 = 3\n", "bad.ini:2:", "busbw_gbps.<bytes>.<ranks>");
    refused("[transports]\nintra = nvlink\n", "bad.ini:2:", "expected one of p2p, shm, any");
    /* a typo in a case or dtype would match no row and drop its check: refused */
    refused("[allreduce]\ndtype = flaot32\n", "bad.ini:2:",
            "dtype = 'flaot32': expected one of float32, float64, int32, float16");
    refused("[allreduce]\ncase = outofplace\n", "bad.ini:2:",
            "expected one of out_of_place, in_place");
    refused("[compute]\ncase = step_our\n", "bad.ini:2:",
            "expected one of step_ours, step_ref, step_convs");
    refused("[transports]\ngdrdma = maybe\n", "bad.ini:2:", "optional, required, off");
    refused("[binding]\nrequired = sure\n", "bad.ini:2:", "expected yes or no");
    refused("[profile]\nname = only-a-name\n", "bad.ini", "asks for no check");
    /* numbers are decimal, finite and whole (issue 15: 0x10 read as 16) */
    refused("[compute]\nmin_tflops = 0x10\n", "bad.ini:2:",
            "min_tflops = '0x10': expected a number >= 0: '0x10' is not a number (decimal only");
    refused("[p2p]\nmin_gbps.nvlink = inf\n", "bad.ini:2:", "'inf' is not a number");
    refused("[noise]\nmax_spread_pct = nan\n", "bad.ini:2:", "'nan' is not a number");
    refused("[h2d]\nmin_pinned_gbps_per_gpu_all = 1e999\n", "bad.ini:2:",
            "'1e999' is not a finite number");
    refused("[compute]\nmin_tflops = 12.5 GB\n", "bad.ini:2:", "'12.5 GB' is not a number");
    refused("[node]\ngpus = +4\n", "bad.ini:2:", "gpus = '+4': expected a whole number");
    /* a node's counts share one bound with health's --gpus and --ib-ports (1024) */
    refused("[infiniband]\nports = 1025\n", "bad.ini:2:", "ports = '1025'");
    refused("[node]\ngpus = 1025\n", "bad.ini:2:", "gpus = '1025'");
    {
        struct fb_profile q;
        char e2[512] = "";
        CHECK(fb_profile_parse("[infiniband]\nports = 128\n", "p.ini", &q, e2, sizeof e2) ==
              FB_OK);
        CHECK(q.ib_ports == 128);
    }
    refused("[h2d]\nbytes = 0x100000\n", "bad.ini:2:", "bytes = '0x100000'");
    refused("[allreduce]\nbusbw_gbps.0x100000.2 = 3\n", "bad.ini:2:", "unknown key");
    refused("[allreduce]\nbusbw_gbps.1M.2 = 3\n", "bad.ini:2:", "bytes in digits, not 1M");
    refused("[allreduce]\nbusbw_gbps.1048576.+2 = 3\n", "bad.ini:2:", "unknown key");
    /* one key however its numbers are written: a check judged twice, PASS and FAIL */
    refused("[allreduce]\nbusbw_gbps.1048576.2 = 3\n\nbusbw_gbps.1048576.02 = 5\n", "bad.ini:4:",
            "'busbw_gbps.1048576.02' given twice in [allreduce] (duplicate key: the same as "
            "'busbw_gbps.1048576.2' at line 2)");
    refused("[allreduce]\nbusbw_gbps.01048576.2 = 3\nbusbw_gbps.1048576.2 = 5\n", "bad.ini:3:",
            "the same as 'busbw_gbps.01048576.2' at line 2");
    refused("[node]\ngpus = 4\n[node]\ngpus = 4\n", "bad.ini:4:",
            "'gpus' given twice in [node] (duplicate key: first at line 2)");
    /* the first error is the one reported, whether inih or our handler found it */
    refused("[node]\ngpus = x\ngarbage\n", "bad.ini:2:", "gpus = 'x'");
    refused("[node]\ngarbage\ngpus = x\n", "bad.ini:2:", "not a [section]");
    {
        char text[600];
        snprintf(text, sizeof text, "[compute]\nmin_tflops = 1\n; %0450d\n", 7);
        refused(text, "bad.ini:3:", "line longer than");
    }
}

/* Text that is not UTF-8 is refused, naming the byte; UTF-8 text is kept as it is. */
static void utf8_text(void)
{
    struct fb_profile p;
    char err[512] = "";

    refused("[profile]\ndescription = caf\xe9\n", "bad.ini:2:",
            "not UTF-8: \\xe9 after 'description = caf'");
    refused("[profile]\ndescription = cut \xe2\x9c\n", "bad.ini:2:",
            "not UTF-8: \\xe2 after 'description = cut '");
    refused("; \xed\xa0\x80 a surrogate\n[compute]\nmin_tflops = 1\n", "bad.ini:1:",
            "not UTF-8: \\xed after '; '");
    CHECK(fb_profile_parse("[profile]\ndescription = caf\xc3\xa9 \xe2\x9c\x93\n[compute]\n"
                           "min_tflops = 1\n", "good.ini", &p, err, sizeof err) == FB_OK);
    CHECK_STR(p.description, "caf\xc3\xa9 \xe2\x9c\x93");
}

/* Writes len bytes to a temporary file and loads it as a profile into *p: its status, the
 * message in err. */
static fb_status load_bytes(const char *data, size_t len, struct fb_profile *p, char *err,
                            size_t errlen)
{
    char path[] = "/tmp/fb_test_profile.XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    fb_status st = FB_ERR_IO;

    if (f) {
        CHECK(fwrite(data, 1, len, f) == len);
        fclose(f);
        st = fb_profile_load(path, p, err, errlen);
    }
    if (fd >= 0)
        unlink(path);
    return st;
}

/* A line as long as a profile allows (198 characters, inih's) loads with CRLF as with LF, from a file
 * and from a string; one character more is refused either way. */
static void crlf_at_the_limit(void)
{
    for (int len = 198; len <= 199; len++)
        for (int crlf = 0; crlf <= 1; crlf++) {
            char text[700], err[512] = "";
            struct fb_profile p;
            const char *eol = crlf ? "\r\n" : "\n";
            int n = snprintf(text, sizeof text, "; %0*d%s[compute]%smin_tflops = 1%s", len - 2, 7,
                             eol, eol, eol);
            fb_status want = len == 198 ? FB_OK : FB_ERR_USAGE;

            CHECK(fb_profile_parse(text, "t.ini", &p, err, sizeof err) == want);
            if (want == FB_OK)
                CHECK(p.compute_min_tflops == 1.0);
            else
                CHECK_HAS(err, "t.ini:1: line longer than 198 characters");
            err[0] = '\0';
            CHECK(load_bytes(text, (size_t)n, &p, err, sizeof err) == want);
            if (want == FB_OK)
                CHECK(p.compute_min_tflops == 1.0);
            else
                CHECK_HAS(err, ":1: line longer than 198 characters");
        }
    /* a CR before the CRLF is the line's own, at the limit as below it: refused alike */
    for (int len = 10; len <= 198; len += 188) {
        char text[700], err[512] = "";
        struct fb_profile p;
        int n = snprintf(text, sizeof text, "; %0*d\r\r\n[compute]\r\nmin_tflops = 1\r\n",
                         len - 3, 7);

        CHECK(fb_profile_parse(text, "t.ini", &p, err, sizeof err) == FB_ERR_USAGE);
        CHECK_HAS(err, "t.ini:1: control character: \\x0d after '; 000");
        err[0] = '\0';
        CHECK(load_bytes(text, (size_t)n, &p, err, sizeof err) == FB_ERR_USAGE);
        CHECK_HAS(err, ":1: control character: \\x0d after '; 000");
    }
}

static void missing_file(void)
{
    struct fb_profile p;
    char err[512] = "";

    CHECK(fb_profile_load("/nonexistent/x.ini", &p, err, sizeof err) == FB_ERR_IO);
    CHECK_HAS(err, "cannot open profile '/nonexistent/x.ini'");
}

/* Writes len bytes to a temporary file and loads it as a profile: FB_ERR_USAGE with `want`. */
static void refused_file(const char *data, size_t len, const char *want)
{
    char path[] = "/tmp/fb_test_profile.XXXXXX", where[64];
    struct fb_profile p;
    char err[512] = "";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;

    CHECK(f != NULL);
    if (!f)
        return;
    CHECK(fwrite(data, 1, len, f) == len);
    fclose(f);
    CHECK(fb_profile_load(path, &p, err, sizeof err) == FB_ERR_USAGE);
    snprintf(where, sizeof where, "%s:", path);
    CHECK_HAS(err, where);
    CHECK_HAS(err, want);
    unlink(path);
}

/* What a file can hold and a string cannot: a NUL byte ("0.1<NUL>junk" read as 0.1); and a
 * folder, which fopen opens and reads as nothing. */
static void bad_files(void)
{
    static const char value[] = "[compute]\nmin_tflops = 0.1\0junk\n";
    static const char comment[] = "; a \0 comment\n[compute]\nmin_tflops = 1\n";
    static const char text[] = "[node]\ngpu_model = V100\0-SXM2\n";
    struct fb_profile p;
    char err[512] = "";

    refused_file(value, sizeof value - 1, ":2: min_tflops: a NUL byte in its line");
    refused_file(comment, sizeof comment - 1, ":1: a NUL byte in the line");
    refused_file(text, sizeof text - 1, ":2: gpu_model: a NUL byte");
    CHECK(fb_profile_load("/tmp", &p, err, sizeof err) == FB_ERR_USAGE);
    CHECK_STR(err, "not a profile file: '/tmp' is a directory");
}

/* Every shipped profile loads and asks for something. */
static void shipped(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;

    CHECK(d != NULL);
    if (!d)
        return;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        char path[4096], err[512] = "";
        struct fb_profile p;
        if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (fb_profile_load(path, &p, err, sizeof err) != FB_OK) {
            fprintf(stderr, "shipped profile does not load: %s\n", err);
            fb_test_failures++;
        }
        n++;
    }
    closedir(d);
    CHECK(n >= 6); /* c4140-b, -k, -m, hgx-h100-8, hgx-h200-8, host-ci */
}

/* Looking a name up in FB_PROFILE_PATH: a regular file (or a link to one) is the profile; a
 * FIFO, a link to a device or a folder under the name is named as what it is, never "no
 * profile named", and is not listed among the profiles there (issue 30). */
static void find_by_name(void)
{
    char tmp[] = "/tmp/fb_test_profile_find.XXXXXX", path[4200], env[4200], err[1200], f[4200];
    FILE *fp;

    CHECK(mkdtemp(tmp) != NULL);
    snprintf(f, sizeof f, "%s/good.ini", tmp);
    CHECK((fp = fopen(f, "w")) != NULL);
    if (fp)
        fclose(fp);
    snprintf(f, sizeof f, "%s/fifo.ini", tmp);
    CHECK(mkfifo(f, 0600) == 0);
    snprintf(f, sizeof f, "%s/zero.ini", tmp);
    CHECK(symlink("/dev/zero", f) == 0);
    snprintf(f, sizeof f, "%s/dir.ini", tmp);
    CHECK(mkdir(f, 0700) == 0);
    snprintf(f, sizeof f, "%s/alias.ini", tmp);
    CHECK(symlink("good.ini", f) == 0);
    snprintf(env, sizeof env, "/nonexistent:%s", tmp);

    CHECK(fb_profile_find("good", "/nonexistent", env, path, sizeof path, err, sizeof err) ==
          FB_OK);
    snprintf(f, sizeof f, "%s/good.ini", tmp);
    CHECK(strcmp(path, f) == 0);
    CHECK(fb_profile_find("alias", "/nonexistent", env, path, sizeof path, err, sizeof err) ==
          FB_OK);
    static const struct {
        const char *name, *what;
    } bad[] = {{"fifo", "a FIFO"}, {"zero", "a device"}, {"dir", "a folder"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[600];
        err[0] = '\0';
        CHECK(fb_profile_find(bad[i].name, "/nonexistent", env, path, sizeof path, err,
                              sizeof err) == FB_ERR_USAGE);
        snprintf(want, sizeof want, "profile '%s': '%s/%s.ini' is %s, not a profile file",
                 bad[i].name, tmp, bad[i].name, bad[i].what);
        if (strcmp(err, want) != 0) {
            fprintf(stderr, "find %s: '%s', expected '%s'\n", bad[i].name, err, want);
            fb_test_failures++;
        }
    }
    /* an absent name lists the profiles there: the regular ones alone */
    CHECK(fb_profile_find("nothere", "/nonexistent", env, path, sizeof path, err, sizeof err) ==
          FB_ERR_USAGE);
    if (!strstr(err, "(profiles there: alias good)")) {
        fprintf(stderr, "find nothere: '%s' does not list 'alias good' alone\n", err);
        fb_test_failures++;
    }
    snprintf(f, sizeof f, "rm -rf '%s'", tmp);
    CHECK(system(f) == 0);
}

int main(int argc, char **argv)
{
    find_by_name();
    good_values();
    malformed();
    utf8_text();
    crlf_at_the_limit();
    missing_file();
    bad_files();
    if (argc > 1)
        shipped(argv[1]);
    else
        CHECK(!"give the profiles/ folder as argv[1]");
    TEST_DONE();
}
