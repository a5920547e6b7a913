/* Fuzzes whole NCCL logs as `fabricbench nccl-log`, `doctor --nccl-log` and `accept` read them
 * (harness/nccllog/nccl_report.c by file name, then the verdicts and the one-line summary). A log
 * that reads has its connections merged and counted once each; one that does not is refused with
 * "file:line: what". The same input is also read as two files (two ranks' logs), which must give
 * the same connections as one, each line counted twice. */
#include "fuzz.h"

#include "nccl_report.h"
#include "nccl_verdict.h"

static struct fuzz_file file;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_file_init(&file, "nccl-rank0.log");
    return 0;
}

static void check_report(const struct fb_nccl_report *r)
{
    struct fb_nccl_verdict v[FB_NCCL_VERDICTS];
    char summary[1024];
    size_t counted = 0;

    FUZZ_CHECK(r->nccl_lines <= r->lines);
    for (int p = 0; p < FB_NCCL_PATHS; p++)
        counted += r->intra[p] + r->inter[p];
    FUZZ_CHECK(counted == r->nconns);
    for (size_t i = 1; i < r->nconns; i++) {
        const struct fb_nccl_conn *a = &r->conns[i - 1], *b = &r->conns[i];
        FUZZ_CHECK(a->channel < b->channel || (a->channel == b->channel && a->src <= b->src));
    }
    FUZZ_CHECK(memchr(r->nics, '\0', sizeof r->nics) && memchr(r->env, '\0', sizeof r->env));
    FUZZ_CHECK(memchr(r->version, '\0', sizeof r->version));
    enum fb_verdict worst = fb_nccl_verdicts(r, v);
    (void)worst;
    for (int i = 0; i < FB_NCCL_VERDICTS; i++)
        FUZZ_CHECK(v[i].check && memchr(v[i].text, '\0', sizeof v[i].text));
    fb_nccl_report_summary(r, summary, sizeof summary);
    FUZZ_CHECK(strncmp(summary, "NCCL ", 5) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fb_nccl_report r, two;
    const char *paths[2] = {file.path, file.path};
    char err[600];
    size_t n = strlen(file.path);
    fb_status st;

    fuzz_file_set(&file, data, size);
    err[0] = '\0';
    st = fb_nccl_report_files(paths, 1, &r, err, sizeof err);
    FUZZ_CHECK(st == FB_OK || st == FB_ERR_USAGE);
    if (st != FB_OK) {
        fuzz_check_message(err, 0);
        FUZZ_CHECK(strncmp(err, file.path, n) == 0 && err[n] == ':' && err[n + 1] >= '1' &&
                   err[n + 1] <= '9');
        FUZZ_CHECK(r.conns == NULL && r.nconns == 0);
        return 0;
    }
    check_report(&r);
    FUZZ_CHECK(fb_nccl_report_files(paths, 2, &two, err, sizeof err) == FB_OK);
    check_report(&two);
    FUZZ_CHECK(two.lines == 2 * r.lines && two.nconns == r.nconns);
    fb_nccl_report_release(&two);
    fb_nccl_report_release(&r);
    return 0;
}
