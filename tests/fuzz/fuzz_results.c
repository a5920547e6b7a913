/* Fuzzes the results.csv reader (harness/results/results_read.c) as `compare` and `accept` use it:
 * by file name. A file that reads must have rows that satisfy the reader's promises (text cells
 * terminated, counts in range, lines increasing) and must then go through compare's join with
 * itself (every row matched; a row matched with itself has a ratio of 1 or none); one that does not
 * must be refused with "file:line: what". The same bytes are also parsed from an exactly sized
 * buffer (fb_results_parse), so a read past the end cannot hide in slack. */
#include "fuzz.h"

#include <math.h>

#include "compare.h"
#include "results_read.h"

static struct fuzz_file file;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_file_init(&file, "results.csv");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fb_read_results *r = malloc(sizeof *r);
    struct fb_comparison cmp = {0};
    char err[600];
    size_t n = strlen(file.path);
    fb_status st;

    FUZZ_CHECK(r);
    fuzz_file_set(&file, data, size);
    err[0] = '\0';
    st = fb_results_read(file.path, r, err, sizeof err);
    FUZZ_CHECK(st == FB_OK || st == FB_ERR_USAGE);
    /* the reader's parse over a copy of exactly `size` bytes: a read past the end is a crash
     * (the file's buffer has room to spare, where such a read would go unseen) */
    {
        struct fb_read_results *again = malloc(sizeof *again);
        char *exact = malloc(size ? size : 1), err2[600] = "";
        FUZZ_CHECK(again && exact);
        memcpy(exact, data, size);
        FUZZ_CHECK(fb_results_parse(file.path, exact, size, again, err2, sizeof err2) == st);
        FUZZ_CHECK(strcmp(err, err2) == 0 && again->nrows == r->nrows);
        fb_results_read_release(again);
        free(again);
        free(exact);
    }
    if (st != FB_OK) {
        fuzz_check_message(err, fuzz_has_lf(data, size));
        FUZZ_CHECK(strncmp(err, file.path, n) == 0 && err[n] == ':' && err[n + 1] >= '1' &&
                   err[n + 1] <= '9');
        FUZZ_CHECK(r->rows == NULL && r->nrows == 0);
        free(r);
        return 0;
    }
    for (size_t i = 0; i < r->nrows; i++) {
        const struct fb_read_row *row = &r->rows[i];
        FUZZ_CHECK(row->line >= 2 && (i == 0 || row->line > r->rows[i - 1].line));
        FUZZ_CHECK(memchr(row->run_id, '\0', sizeof row->run_id));
        FUZZ_CHECK(row->row.bench[0] && row->row.metric[0]);
        FUZZ_CHECK(row->row.nodes >= 0 && row->row.ranks >= 0 && row->row.src >= -1 &&
                   row->row.dst >= -1 && row->row.bytes >= -1 && row->row.iters >= 0);
    }
    /* compare's join of the file with itself: every row finds its partner (itself, or an
     * earlier duplicate of its key), so none is left on one side */
    FUZZ_CHECK(fb_compare_join(r, r, 0.05, &cmp) == FB_OK);
    FUZZ_CHECK(cmp.n == r->nrows);
    FUZZ_CHECK(cmp.count[FB_CMP_ONLY_BASE] == 0 && cmp.count[FB_CMP_ONLY_NEW] == 0);
    {
        size_t total = 0;
        for (int v = 0; v <= FB_CMP_ONLY_NEW; v++)
            total += cmp.count[v];
        FUZZ_CHECK(total == cmp.n);
    }
    for (size_t i = 0; i < cmp.n; i++)
        FUZZ_CHECK(cmp.e[i].base && cmp.e[i].cur &&
                   (cmp.e[i].base != cmp.e[i].cur || isnan(cmp.e[i].ratio) ||
                    cmp.e[i].ratio == 1));
    fb_compare_release(&cmp);
    /* the file as three runs a side: one pooled row per row of it (each key's k-th occurrence
     * is one row), every run counted where the median is finite, and nothing left over when
     * the pool is joined with itself */
    {
        struct fb_read_results three[3] = {*r, *r, *r}, pool;
        FUZZ_CHECK(fb_compare_pool(three, 3, &pool) == FB_OK);
        FUZZ_CHECK(pool.nrows == r->nrows);
        for (size_t i = 0; i < pool.nrows; i++)
            FUZZ_CHECK(pool.rows[i].row.st.samples == 0 || pool.rows[i].row.st.samples == 3);
        FUZZ_CHECK(fb_compare_join_runs(&pool, &pool, 0.05, &cmp) == FB_OK);
        FUZZ_CHECK(cmp.n == pool.nrows && cmp.count[FB_CMP_ONLY_BASE] == 0 &&
                   cmp.count[FB_CMP_ONLY_NEW] == 0 && cmp.count[FB_CMP_REGRESSION] == 0);
        fb_compare_release(&cmp);
        fb_results_read_release(&pool);
    }
    fb_results_read_release(r);
    free(r);
    return 0;
}
