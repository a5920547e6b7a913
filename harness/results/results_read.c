/* Reading results.csv back: an RFC 4180 record parser over the whole file in memory, the header
 * checked against fb_results_columns, and every cell checked against its column's type and the
 * size of its fb_row field. The first fault ends the read with "path:line: what". */
#include "results_read.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* No line fabricbench writes comes near this; a longer one is not a results.csv. */
#define FB_READ_LINE_MAX 65536
/* More fields than this in one record is refused before they are counted further. */
#define FB_READ_FIELDS_MAX 64

struct parser {
    const char *path;
    const char *buf;
    size_t len, pos;
    size_t line;      /* line of buf[pos] */
    size_t col;       /* bytes since the start of that line */
    char *scratch;    /* the record's unquoted fields, each NUL-terminated */
    size_t used;
    size_t nfields;
    size_t off[FB_READ_FIELDS_MAX];
    char *err;
    size_t errlen;
};

static void fail(struct parser *p, size_t line, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(p->err, p->errlen, "%s:%zu: ", p->path, line);

    if (n < 0 || (size_t)n >= p->errlen)
        return;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

/* Takes one byte, keeping the line count and refusing NUL bytes and overlong lines. */
static int take(struct parser *p, char *c)
{
    *c = p->buf[p->pos++];
    if (*c == '\0') {
        fail(p, p->line, "NUL byte in the file (not a text CSV)");
        return -1;
    }
    if (*c == '\n') {
        p->line++;
        p->col = 0;
    } else if (++p->col > FB_READ_LINE_MAX) {
        fail(p, p->line, "line longer than %d bytes", FB_READ_LINE_MAX);
        return -1;
    }
    return 0;
}

static void put(struct parser *p, char c)
{
    /* scratch holds len + FB_READ_FIELDS_MAX + 1 bytes: every byte of input adds at most one
     * here, and every field one NUL. */
    p->scratch[p->used++] = c;
}

/* Is the input at a line end ("\n" or "\r\n")? Consumes it when so. */
static int at_line_end(struct parser *p, int *error)
{
    char c;

    *error = 0;
    if (p->pos < p->len && p->buf[p->pos] == '\n') {
        *error = take(p, &c);
        return 1;
    }
    if (p->pos + 1 < p->len && p->buf[p->pos] == '\r' && p->buf[p->pos + 1] == '\n') {
        p->pos++;
        p->col++;
        *error = take(p, &c);
        return 1;
    }
    return 0;
}

/* Parses the next record into p->off/p->scratch. Returns 1 with a record, 0 at the end of the
 * input, -1 on a fault (message in p->err). */
static int next_record(struct parser *p)
{
    int error;

    if (p->pos >= p->len)
        return 0;
    p->used = 0;
    p->nfields = 0;
    for (;;) {
        char c;

        if (p->nfields == FB_READ_FIELDS_MAX) {
            fail(p, p->line, "more than %d fields", FB_READ_FIELDS_MAX);
            return -1;
        }
        p->off[p->nfields++] = p->used;
        if (p->pos < p->len && p->buf[p->pos] == '"') {
            size_t open_line = p->line;
            if (take(p, &c))
                return -1;
            for (;;) {
                if (p->pos >= p->len) {
                    fail(p, open_line, "quoted field not closed before the end of the file");
                    return -1;
                }
                if (take(p, &c))
                    return -1;
                if (c != '"') {
                    put(p, c);
                    continue;
                }
                if (p->pos < p->len && p->buf[p->pos] == '"') {
                    if (take(p, &c))
                        return -1;
                    put(p, '"');
                    continue;
                }
                break;
            }
            put(p, '\0');
            if (p->pos >= p->len)
                return 1;
            if (at_line_end(p, &error))
                return error ? -1 : 1;
            if (take(p, &c))
                return -1;
            if (c != ',') {
                fail(p, p->line, "'%c' after a closing quote (expected a comma or a line end)",
                     c);
                return -1;
            }
            continue;
        }
        for (;;) {
            if (p->pos >= p->len) {
                put(p, '\0');
                return 1;
            }
            if (at_line_end(p, &error)) {
                put(p, '\0');
                return error ? -1 : 1;
            }
            if (take(p, &c))
                return -1;
            if (c == ',')
                break;
            if (c == '"') {
                fail(p, p->line, "quote inside an unquoted field");
                return -1;
            }
            if (c == '\r') {
                fail(p, p->line, "carriage return not followed by a line feed");
                return -1;
            }
            put(p, c);
        }
        put(p, '\0');
    }
}

static const char *field(const struct parser *p, size_t i) { return p->scratch + p->off[i]; }

static int read_text(struct parser *p, size_t line, size_t col, char *dst, size_t size)
{
    const char *v = field(p, col);
    size_t n = strlen(v);

    if (n >= size) {
        fail(p, line, "column '%s': '%.40s%s' is longer than %zu characters",
             fb_results_columns[col], v, n > 40 ? "..." : "", size - 1);
        return -1;
    }
    memcpy(dst, v, n + 1);
    return 0;
}

/* A base-10 integer in [lo, hi], the whole cell; an empty cell gives -1 when optional. */
static int read_int(struct parser *p, size_t line, size_t col, long long lo, long long hi,
                    int optional, long long *out)
{
    const char *v = field(p, col);
    char *end;
    long long x;

    if (!*v) {
        if (optional) {
            *out = -1;
            return 0;
        }
        fail(p, line, "column '%s' is empty (an integer is required)", fb_results_columns[col]);
        return -1;
    }
    errno = 0;
    x = strtoll(v, &end, 10);
    if (*v == ' ' || *v == '\t' || *v == '+' || *end || errno == ERANGE) {
        fail(p, line, "column '%s': '%.40s' is not an integer", fb_results_columns[col], v);
        return -1;
    }
    if (x < lo || x > hi) {
        fail(p, line, "column '%s': %lld is out of range [%lld, %lld]", fb_results_columns[col],
             x, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

/* A decimal number, the whole cell (strtod's "nan" and "inf" included: %.10g writes them). */
static int read_num(struct parser *p, size_t line, size_t col, double *out)
{
    const char *v = field(p, col);
    char *end;

    errno = 0;
    if (!*v || *v == ' ' || *v == '\t' || strchr(v, 'x') || strchr(v, 'X')) {
        fail(p, line, "column '%s': '%.40s' is not a number", fb_results_columns[col], v);
        return -1;
    }
    *out = strtod(v, &end);
    if (*end || errno == ERANGE) {
        fail(p, line, "column '%s': '%.40s' is not a number", fb_results_columns[col], v);
        return -1;
    }
    return 0;
}

/* Fills one row from the parsed record; columns are indexed as in fb_results_columns. */
static int read_row(struct parser *p, size_t line, struct fb_read_row *r)
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
    for (size_t k = 0; k < 7; k++)
        if (read_num(p, line, 19 + k, stat[k]))
            return -1;
    if (!r->row.bench[0] || !r->row.metric[0]) {
        fail(p, line, "column '%s' is empty", r->row.bench[0] ? "metric" : "bench");
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

static fb_status slurp(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *data = NULL;
    size_t cap = 0, n = 0;
    fb_status st = FB_OK;

    if (!f) {
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return FB_ERR_IO;
    }
    for (;;) {
        if (n == cap) {
            char *grown;
            cap = cap ? cap * 2 : 65536;
            grown = realloc(data, cap + 1);
            if (!grown) {
                st = FB_ERR_NOMEM;
                snprintf(err, errlen, "%s: out of memory reading it", path);
                goto out;
            }
            data = grown;
        }
        size_t got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            if (ferror(f)) {
                st = FB_ERR_IO;
                snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
            }
            break;
        }
    }
out:
    fclose(f);
    if (st != FB_OK) {
        free(data);
        return st;
    }
    *buf = data;
    *len = n;
    return FB_OK;
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
    st = slurp(path, &buf, &len, err, errlen);
    if (st != FB_OK)
        return st;
    st = fb_results_parse(path, buf, len, out, err, errlen);
    free(buf);
    return st;
}

fb_status fb_results_parse(const char *path, const char *buf, size_t len,
                           struct fb_read_results *out, char *err, size_t errlen)
{
    struct parser p;
    size_t cap = 0;
    fb_status st;
    int got;

    memset(out, 0, sizeof *out);
    memset(&p, 0, sizeof p);
    if (errlen)
        err[0] = '\0';
    snprintf(out->path, sizeof out->path, "%s", path);
    p.path = path;
    p.buf = buf;
    p.len = len;
    p.line = 1;
    p.err = err;
    p.errlen = errlen;
    st = FB_ERR_USAGE;
    if (len == 0) {
        snprintf(err, errlen, "%s:1: the file is empty (no header)", path);
        goto out;
    }
    p.scratch = malloc(len + FB_READ_FIELDS_MAX + 1);
    if (!p.scratch) {
        st = FB_ERR_NOMEM;
        snprintf(err, errlen, "%s: out of memory reading it", path);
        goto out;
    }
    got = next_record(&p);
    if (got < 0)
        goto out;
    if (p.nfields != fb_results_ncolumns) {
        fail(&p, 1, "the header has %zu columns, expected the %zu of a fabricbench results.csv",
             p.nfields, fb_results_ncolumns);
        goto out;
    }
    for (size_t i = 0; i < fb_results_ncolumns; i++) {
        if (strcmp(field(&p, i), fb_results_columns[i]) != 0) {
            fail(&p, 1, "header column %zu is '%.40s', expected '%s'", i + 1, field(&p, i),
                 fb_results_columns[i]);
            goto out;
        }
    }
    for (;;) {
        size_t line = p.line;
        got = next_record(&p);
        if (got < 0)
            goto out;
        if (got == 0)
            break;
        if (p.nfields != fb_results_ncolumns) {
            fail(&p, line, "%zu field%s, expected %zu", p.nfields, p.nfields == 1 ? "" : "s",
                 fb_results_ncolumns);
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
        out->nrows++;
    }
    st = FB_OK;
out:
    free(p.scratch);
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

fb_status fb_csv_table_read(const char *path, struct fb_csv_table *t, char *err, size_t errlen)
{
    struct parser p;
    char *buf = NULL;
    size_t len = 0, cap = 0, used = 0;
    bool header = false;
    fb_status st;
    int got;

    memset(t, 0, sizeof *t);
    memset(&p, 0, sizeof p);
    if (errlen)
        err[0] = '\0';
    st = slurp(path, &buf, &len, err, errlen);
    if (st != FB_OK)
        return st;
    p.path = path;
    p.buf = buf;
    p.len = len;
    p.line = 1;
    p.err = err;
    p.errlen = errlen;
    st = FB_ERR_NOMEM;
    p.scratch = malloc(len + FB_READ_FIELDS_MAX + 1);
    /* All cells: their text is at most the file's bytes, and there is at most one field (one
     * NUL) per comma or line end, plus one. */
    t->store = malloc(2 * len + 2);
    if (!p.scratch || !t->store) {
        snprintf(err, errlen, "%s: out of memory reading it", path);
        goto out;
    }
    st = FB_ERR_USAGE;
    if (len == 0) {
        snprintf(err, errlen, "%s:1: the file is empty (no header)", path);
        goto out;
    }
    for (;;) {
        size_t line = p.line;
        got = next_record(&p);
        if (got < 0)
            goto out;
        if (got == 0)
            break;
        if (t->ncols == 0)
            t->ncols = p.nfields;
        else if (p.nfields != t->ncols) {
            fail(&p, line, "%zu field%s, expected the header's %zu", p.nfields,
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
            const char *v = field(&p, i);
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
    free(p.scratch);
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
