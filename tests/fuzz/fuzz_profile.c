/* Fuzzes hardware profiles (harness/analysis/profile.c over inih): the input is read both ways
 * accept can read it, as a file (fb_profile_load, what `accept --profile` does) and as text in
 * memory (fb_profile_parse). Either way: FB_OK with every list within its bound and every string
 * terminated, or FB_ERR_USAGE with "file:line: what" (or "file: the profile asks for no check").
 * When the input holds no NUL byte the two readers must agree on the status and the message, and on
 * what they read. */
#include "fuzz.h"

#include "profile.h"

static struct fuzz_file file;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_file_init(&file, "profile.ini");
    return 0;
}

static void check_one(fb_status st, const struct fb_profile *p, const char *err, int lf)
{
    size_t n = strlen(file.path);

    FUZZ_CHECK(st == FB_OK || st == FB_ERR_USAGE);
    if (st != FB_OK) {
        fuzz_check_message(err, lf);
        /* the file first, then its line (or, for an empty profile, the file alone) */
        FUZZ_CHECK(strncmp(err, file.path, n) == 0 && err[n] == ':');
        FUZZ_CHECK((err[n + 1] >= '1' && err[n + 1] <= '9') || err[n + 1] == ' ');
        return;
    }
    FUZZ_CHECK(p->np2p <= FB_PROFILE_MAX_P2P && p->nbusbw <= FB_PROFILE_MAX_BUSBW);
    FUZZ_CHECK(p->name[0] && memchr(p->name, '\0', sizeof p->name));
    FUZZ_CHECK(memchr(p->description, '\0', sizeof p->description));
    FUZZ_CHECK(memchr(p->gpu_model, '\0', sizeof p->gpu_model));
    for (size_t i = 0; i < p->np2p; i++)
        FUZZ_CHECK(p->p2p[i].min_gbps >= 0 && memchr(p->p2p[i].link, '\0', sizeof p->p2p[i].link));
    for (size_t i = 0; i < p->nbusbw; i++)
        FUZZ_CHECK(p->busbw[i].bytes > 0 && p->busbw[i].ranks >= 1 && p->busbw[i].min_gbps >= 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* each large (a profile holds a 4 KiB path): on the heap, not the fuzzer's stack */
    struct fb_profile *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    char *text = fuzz_cstr(data, size), ea[640], eb[640];
    int lf = fuzz_has_lf(data, size);
    fb_status sa, sb;

    FUZZ_CHECK(a && b);
    fuzz_file_set(&file, data, size);
    ea[0] = eb[0] = '\0';
    sa = fb_profile_load(file.path, a, ea, sizeof ea);
    check_one(sa, a, ea, lf);
    sb = fb_profile_parse(text, file.path, b, eb, sizeof eb);
    check_one(sb, b, eb, lf);
    if (!memchr(data, '\0', size)) {
        FUZZ_CHECK(sa == sb);
        if (sa != FB_OK)
            FUZZ_CHECK(strcmp(ea, eb) == 0);
        else
            FUZZ_CHECK(strcmp(a->name, b->name) == 0 && a->gpus == b->gpus &&
                       a->np2p == b->np2p && a->nbusbw == b->nbusbw &&
                       a->h2d_bytes == b->h2d_bytes && a->ib_ports == b->ib_ports &&
                       a->gdrdma == b->gdrdma && a->min_samples == b->min_samples &&
                       strcmp(a->description, b->description) == 0);
    }
    free(text);
    free(a);
    free(b);
    return 0;
}
