/* Any CSV file with a header, read whole into a table of cells (csv_table.h). */
#include "csv_table.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_reader.h"
#include "file_read.h"

fb_status fb_csv_table_read(const char *path, enum fb_file_kind kind, struct fb_csv_table *t,
                            char *err, size_t errlen)
{
    struct fb_csv_reader p;
    char *buf = NULL;
    size_t len = 0, cap = 0, used = 0;
    bool header = false;
    fb_status st;
    int got;

    memset(t, 0, sizeof *t);
    memset(&p, 0, sizeof p);
    if (errlen)
        err[0] = '\0';
    st = fb_file_read(path, kind, false, &buf, &len, err, errlen);
    if (st != FB_OK)
        return st;
    if ((st = fb_csv_reader_open(&p, path, buf, len, err, errlen)) != FB_OK)
        goto out;
    st = FB_ERR_NOMEM;
    /* All cells: their text is at most the file's bytes, and there is at most one field (one
     * NUL) per comma or line end, plus one. */
    if (!(t->store = malloc(2 * len + 2))) {
        snprintf(err, errlen, "%s: out of memory reading it", path);
        goto out;
    }
    st = FB_ERR_USAGE;
    for (;;) {
        size_t line = p.line;
        got = fb_csv_reader_next(&p);
        if (got < 0)
            goto out;
        if (got == 0)
            break;
        if (t->ncols == 0)
            t->ncols = p.nfields;
        else if (p.nfields != t->ncols) {
            fb_csv_reader_fail(&p, line, "%zu field%s, expected the header's %zu", p.nfields,
                               p.nfields == 1 ? "" : "s", t->ncols);
            goto out;
        }
        if (t->nrows + 1 >= cap) {
            size_t ncap = cap ? cap * 2 : 16;
            char **cell = realloc(t->cell, ncap * t->ncols * sizeof *cell);
            size_t *lines;
            if (!cell) {
                st = FB_ERR_NOMEM;
                goto out;
            }
            t->cell = cell;
            lines = realloc(t->line, ncap * sizeof *lines);
            if (!lines) {
                st = FB_ERR_NOMEM;
                goto out;
            }
            t->line = lines;
            cap = ncap;
        }
        size_t row = header ? t->nrows + 1 : 0; /* the header is row 0 */
        t->line[row] = line;
        for (size_t i = 0; i < p.nfields; i++) {
            const char *v = fb_csv_reader_field(&p, i);
            size_t n = strlen(v) + 1;
            memcpy(t->store + used, v, n);
            t->cell[row * t->ncols + i] = (char *)(uintptr_t)used; /* offset until the end */
            used += n;
        }
        if (header)
            t->nrows++;
        header = true;
    }
    if (t->ncols == 0) {
        snprintf(err, errlen, "%s:1: no header", path);
        goto out;
    }
    for (size_t i = 0; i < (t->nrows + 1) * t->ncols; i++)
        t->cell[i] = t->store + (uintptr_t)t->cell[i];
    st = FB_OK;
out:
    fb_csv_reader_close(&p);
    free(buf);
    if (st != FB_OK) {
        if (st == FB_ERR_NOMEM && !err[0])
            snprintf(err, errlen, "%s: out of memory reading it", path);
        fb_csv_table_release(t);
    }
    return st;
}

const char *fb_csv_table_get(const struct fb_csv_table *t, size_t row, const char *column)
{
    if (row < 1 || row > t->nrows)
        return NULL;
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->cell[i], column) == 0)
            return t->cell[row * t->ncols + i];
    return NULL;
}

void fb_csv_table_release(struct fb_csv_table *t)
{
    free(t->cell);
    free(t->line);
    free(t->store);
    memset(t, 0, sizeof *t);
}
