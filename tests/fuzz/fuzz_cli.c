/* Fuzzes the command line of `fabricbench run` (harness/cli/cli.c with the sizes and counts of
 * harness/core/units.c): the input is split into arguments at NUL bytes and line feeds, after
 * "run". The parser must return FB_OK or FB_ERR_USAGE, never exit or print, leave a one-line
 * message naming the problem on FB_ERR_USAGE, and on FB_OK options within their bounds. Each
 * input's argv is freed before the next, so parser state kept across calls (getopt's) that points
 * into an old argv is a use-after-free ASan reports. */
#include "fuzz.h"

#include <fcntl.h>

#include "cli.h"
#include "registry.h"

enum { MAX_ARGS = 64 };

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* stdout becomes a memfd whose size tells whether the parser printed */
    int fd = memfd_create("fuzz-stdout", 0);
    FUZZ_CHECK(fd >= 0 && dup2(fd, STDOUT_FILENO) == STDOUT_FILENO);
    close(fd);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *argv[MAX_ARGS + 2], *again[MAX_ARGS + 2], err[512];
    int argc = 0, help = -1;
    struct fb_options o;
    fb_status st;

    FUZZ_CHECK(text);
    memcpy(text, data, size);
    text[size] = '\0';
    argv[argc++] = "run";
    /* arguments are the pieces between separators; an empty piece is an empty argument */
    for (char *p = text, *start = text; size > 0; p++) {
        if (p < text + size && *p != '\0' && *p != '\n')
            continue;
        if (argc == MAX_ARGS + 1)
            break;
        *p = '\0';
        argv[argc++] = strdup(start); /* each its own block, so ASan sees reads past it */
        FUZZ_CHECK(argv[argc - 1]);
        if (p >= text + size)
            break;
        start = p + 1;
    }
    argv[argc] = NULL;
    /* getopt_long permutes argv: a copy in the order given, for the second parse */
    memcpy(again, argv, sizeof again);
    err[0] = '\0';
    st = fb_cli_parse_run(argc, argv, &o, &help, err, sizeof err);
    FUZZ_CHECK(st == FB_OK || st == FB_ERR_USAGE);
    FUZZ_CHECK(help == 0 || help == 1);
    if (st == FB_ERR_USAGE) {
        fuzz_check_message(err, 0); /* no argument holds a line feed */
    } else if (!help) {
        FUZZ_CHECK(o.nsizes <= FB_MAX_SIZES && o.ngroups <= FB_MAX_SIZES &&
                   o.npairs <= FB_MAX_SIZES && o.nthresholds <= FB_MAX_SIZES &&
                   o.nbatches <= FB_MAX_SIZES && o.nrates <= FB_MAX_SIZES);
        FUZZ_CHECK(o.nbench >= 0 && o.nbench <= FB_MAX_BENCHES);
        for (int i = 0; i < o.nbench; i++)
            FUZZ_CHECK(fb_bench_find(o.bench[i]) != NULL);
        for (size_t i = 0; i < o.nsizes; i++)
            FUZZ_CHECK(o.sizes[i] > 0);
        for (size_t i = 0; i < o.ngroups; i++)
            FUZZ_CHECK(o.groups[i] >= 1);
        for (size_t i = 0; i < o.npairs; i++)
            FUZZ_CHECK(o.pairs[i][0] >= 0 && o.pairs[i][1] >= 0 && o.pairs[i][0] != o.pairs[i][1]);
        FUZZ_CHECK(!(o.min_bytes && o.max_bytes && o.min_bytes > o.max_bytes));
        FUZZ_CHECK(o.trials >= 1 && o.warmup >= 0 && o.iters >= 0 && o.classes >= 1);
        FUZZ_CHECK(!o.out_dir || o.out_dir[0]);
        FUZZ_CHECK(memchr(o.backend, '\0', sizeof o.backend) && memchr(o.coll, '\0', sizeof o.coll));
    }
    /* the same arguments again give the same answer: nothing of the last parse is left over
     * (getopt keeps its place inside the argument it was reading) */
    {
        struct fb_options o2;
        char err2[512] = "";
        int help2 = -1;
        fb_status st2 = fb_cli_parse_run(argc, again, &o2, &help2, err2, sizeof err2);
        if (st2 != st || strcmp(err2, err) != 0 || help2 != help) {
            fprintf(stderr, "first parse: %d '%s'; the same arguments again: %d '%s'\n", st,
                    err, st2, err2);
            FUZZ_CHECK(!"the parse depends on the one before");
        }
    }
    /* nothing printed */
    fflush(stdout);
    FUZZ_CHECK(lseek(STDOUT_FILENO, 0, SEEK_END) == 0);
    for (int i = 1; i < argc; i++)
        free(argv[i]);
    free(text);
    return 0;
}
