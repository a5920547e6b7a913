/* Reading results.csv back: records from the CSV reader (csv_reader.h) over the whole file in
 * memory, the header checked against fb_results_columns, and every cell checked against its
 * column's type and the size of its fb_row field. The first fault ends the read with "path:line:
 * what". */
#include "results_read.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv_reader.h"
#include "escape.h"
#include "file_read.h"
#include "units.h"

/* A cell as messages show it: at most 40 bytes, escaped. */
#define SHOWN(v) fb_escape_str((v), 40, (char[200]){0}, 200)

static int read_text(struct fb_csv_reader *p, size_t line, size_t col, char *dst, size_t size)
{
    const char *v = fb_csv_reader_field(p, col);
    size_t n = strlen(v);

    if (n >= size) {
        fb_csv_reader_fail(p, line, "column '%s': '%s' is longer than %zu characters",
                           fb_results_columns[col], SHOWN(v), size - 1);
        return -1;
    }
    memcpy(dst, v, n + 1);
    return 0;
}

/* A base-10 integer in [lo, hi], the whole cell; an empty cell gives -1 when optional. */
static int read_int(struct fb_csv_reader *p, size_t line, size_t col, long long lo, long long hi,
                    int optional, long long *out)
{
    const char *v = fb_csv_reader_field(p, col);
    char *end;
    long long x;

    if (!*v) {
        if (optional) {
            *out = -1;
            return 0;
        }
        fb_csv_reader_fail(p, line, "column '%s' is empty (an integer is required)",
                           fb_results_columns[col]);
        return -1;
    }
    errno = 0;
    x = strtoll(v, &end, 10);
    if (*v == ' ' || *v == '\t' || *v == '+' || *end || errno == ERANGE) {
        fb_csv_reader_fail(p, line, "column '%s': '%s' is not an integer",
                           fb_results_columns[col], SHOWN(v));
        return -1;
    }
    if (x < lo || x > hi) {
        fb_csv_reader_fail(p, line, "column '%s': %lld is out of range [%lld, %lld]",
                           fb_results_columns[col], x, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

/* A finite decimal number, the whole cell (fb_decimal_parse: no hex, no inf or nan, no
 * overflow; a figure that is not finite cannot be judged, so the file is malformed). */
static int read_num(struct fb_csv_reader *p, size_t line, size_t col, double *out)
{
    const char *v = fb_csv_reader_field(p, col);
    char why[200];

    if (fb_decimal_parse(v, strlen(v), out, why, sizeof why) != FB_OK) {
        fb_csv_reader_fail(p, line, "column '%s': %s", fb_results_columns[col], why);
        return -1;
    }
    return 0;
}

/* Fills one row from the parsed record; columns are indexed as in fb_results_columns. */
static int read_row(struct fb_csv_reader *p, size_t line, struct fb_read_row *r)
{
    long long v[12];
    double *stat[7];

    memset(r, 0, sizeof *r);
    r->line = line;
    stat[0] = &r->row.st.median;
    stat[1] = &r->row.st.p05;
    stat[2] = &r->row.st.p95;
    stat[3] = &r->row.st.min;
    stat[4] = &r->row.st.max;
    stat[5] = &r->row.st.mean;
    stat[6] = &r->row.st.stddev;
    if (read_text(p, line, 0, r->run_id, sizeof r->run_id) ||
        read_text(p, line, 1, r->row.bench, sizeof r->row.bench) ||
        read_text(p, line, 2, r->row.kase, sizeof r->row.kase) ||
        read_text(p, line, 3, r->row.backend, sizeof r->row.backend) ||
        read_text(p, line, 4, r->row.transport, sizeof r->row.transport) ||
        read_text(p, line, 5, r->row.link, sizeof r->row.link) ||
        read_int(p, line, 6, 0, INT_MAX, 0, &v[0]) ||      /* nodes */
        read_int(p, line, 7, 0, INT_MAX, 0, &v[1]) ||      /* ranks */
        read_int(p, line, 8, 0, INT_MAX, 1, &v[2]) ||      /* src */
        read_int(p, line, 9, 0, INT_MAX, 1, &v[3]) ||      /* dst */
        read_int(p, line, 10, 0, LONG_MAX, 1, &v[4]) ||    /* batch */
        read_int(p, line, 11, 0, LLONG_MAX, 1, &v[5]) ||   /* bytes */
        read_int(p, line, 12, 0, LLONG_MAX, 1, &v[6]) ||   /* count */
        read_text(p, line, 13, r->row.dtype, sizeof r->row.dtype) ||
        read_text(p, line, 14, r->row.redop, sizeof r->row.redop) ||
        read_int(p, line, 15, 0, LONG_MAX, 0, &v[7]) ||    /* iters */
        read_text(p, line, 16, r->row.metric, sizeof r->row.metric) ||
        read_text(p, line, 17, r->row.unit, sizeof r->row.unit) ||
        read_int(p, line, 18, 0, LLONG_MAX, 0, &v[8]) ||   /* samples */
        read_int(p, line, 26, 0, LLONG_MAX, 1, &v[9]))     /* wrong */
        return -1;
    /* expected and bound: absent in a legacy file; an empty expected is "none" */
    if (p->nfields > 27 && *fb_csv_reader_field(p, 27)) {
        if (read_num(p, line, 27, &r->row.expected))
            return -1;
        if (!(r->row.expected > 0)) {
            fb_csv_reader_fail(p, line, "column 'expected': %g is not above 0 (leave it empty)",
                               r->row.expected);
            return -1;
        }
        if (read_text(p, line, 28, r->row.bound, sizeof r->row.bound))
            return -1;
    } else if (p->nfields > 27 && *fb_csv_reader_field(p, 28)) {
        fb_csv_reader_fail(p, line, "column 'bound' is set where 'expected' is empty");
        return -1;
    }
    /* cpu_wait: absent before the column; empty where unknown */
    r->row.cpu_wait_known = false;
    if (p->nfields > 29 && *fb_csv_reader_field(p, 29)) {
        if (read_num(p, line, 29, &r->row.cpu_wait))
            return -1;
        if (!(r->row.cpu_wait >= 0 && r->row.cpu_wait <= 1)) {
            fb_csv_reader_fail(p, line, "column 'cpu_wait': %g is not a share from 0 to 1",
                               r->row.cpu_wait);
            return -1;
        }
        r->row.cpu_wait_known = true;
    }
    for (size_t k = 0; k < 7; k++)
        if (read_num(p, line, 19 + k, stat[k]))
            return -1;
    if (!r->row.bench[0] || !r->row.metric[0]) {
        fb_csv_reader_fail(p, line, "column '%s' is empty", r->row.bench[0] ? "metric" : "bench");
        return -1;
    }
    r->row.nodes = (int)v[0];
    r->row.ranks = (int)v[1];
    r->row.src = (int)v[2];
    r->row.dst = (int)v[3];
    r->row.batch = (long)v[4];
    r->row.bytes = v[5];
    r->row.count = v[6];
    r->row.iters = (long)v[7];
    r->row.st.samples = (size_t)v[8];
    r->row.wrong = v[9];
    r->row.detail = false;
    return 0;
}

fb_status fb_results_read(const char *path, struct fb_read_results *out, char *err,
                          size_t errlen)
{
    char *buf = NULL;
    size_t len = 0;
    fb_status st;

    memset(out, 0, sizeof *out);
    if (errlen)
        err[0] = '\0';
    if (snprintf(out->path, sizeof out->path, "%s", path) >= (int)sizeof out->path) {
        snprintf(err, errlen, "path is too long: '%.60s...'", path);
        return FB_ERR_USAGE;
    }
    st = fb_file_read(path, FB_FILE_RESULTS_CSV, false, &buf, &len, err, errlen);
    if (st != FB_OK)
        return st;
    st = fb_results_parse(path, buf, len, out, err, errlen);
    free(buf);
    return st;
}

fb_status fb_results_parse(const char *path, const char *buf, size_t len,
                           struct fb_read_results *out, char *err, size_t errlen)
{
    struct fb_csv_reader p;
    size_t cap = 0, ncols;
    fb_status st;
    int got;

    memset(out, 0, sizeof *out);
    memset(&p, 0, sizeof p);
    if (errlen)
        err[0] = '\0';
    snprintf(out->path, sizeof out->path, "%s", path);
    if ((st = fb_csv_reader_open(&p, path, buf, len, err, errlen)) != FB_OK)
        goto out;
    st = FB_ERR_USAGE;
    got = fb_csv_reader_next(&p);
    if (got < 0)
        goto out;
    if (p.nfields != fb_results_ncolumns && p.nfields != fb_results_model_ncolumns &&
        p.nfields != fb_results_legacy_ncolumns) {
        fb_csv_reader_fail(&p, 1,
                           "the header has %zu columns, expected the %zu of a fabricbench "
                           "results.csv (or the %zu of one before 'cpu_wait', or the %zu of "
                           "one before 'expected')",
                           p.nfields, fb_results_ncolumns, fb_results_model_ncolumns,
                           fb_results_legacy_ncolumns);
        goto out;
    }
    ncols = p.nfields;
    for (size_t i = 0; i < ncols; i++) {
        if (strcmp(fb_csv_reader_field(&p, i), fb_results_columns[i]) != 0) {
            fb_csv_reader_fail(&p, 1, "header column %zu is '%s', expected '%s'", i + 1,
                               SHOWN(fb_csv_reader_field(&p, i)), fb_results_columns[i]);
            goto out;
        }
    }
    for (;;) {
        size_t line = p.line;
        got = fb_csv_reader_next(&p);
        if (got < 0)
            goto out;
        if (got == 0)
            break;
        if (p.nfields != ncols) {
            fb_csv_reader_fail(&p, line, "%zu field%s, expected %zu", p.nfields,
                               p.nfields == 1 ? "" : "s", ncols);
            goto out;
        }
        if (out->nrows == cap) {
            size_t ncap = cap ? cap * 2 : 64;
            struct fb_read_row *rows = realloc(out->rows, ncap * sizeof *rows);
            if (!rows) {
                st = FB_ERR_NOMEM;
                snprintf(err, errlen, "%s: out of memory reading it", path);
                goto out;
            }
            out->rows = rows;
            cap = ncap;
        }
        if (read_row(&p, line, &out->rows[out->nrows]))
            goto out;
        /* a results.csv is one run's: a row of another (files joined by hand) would be counted
         * as this run's in silence */
        if (out->nrows && strcmp(out->rows[out->nrows].run_id, out->rows[0].run_id) != 0) {
            fb_csv_reader_fail(&p, line, "run_id '%s', where the first row's is '%s' (a "
                               "results.csv holds one run)", SHOWN(out->rows[out->nrows].run_id),
                               SHOWN(out->rows[0].run_id));
            goto out;
        }
        out->nrows++;
    }
    st = FB_OK;
out:
    fb_csv_reader_close(&p);
    if (st != FB_OK)
        fb_results_read_release(out);
    return st;
}

void fb_results_read_release(struct fb_read_results *r)
{
    free(r->rows);
    r->rows = NULL;
    r->nrows = 0;
}
