/* The RFC 4180 record parser (csv_reader.h): records of a CSV file held whole in memory, with
 * line numbers for messages, NUL bytes and overlong lines refused. */
#include "csv_reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fb_csv_reader_fail(struct fb_csv_reader *p, size_t line, const char *fmt, ...)
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
static int take(struct fb_csv_reader *p, char *c)
{
    *c = p->buf[p->pos++];
    if (*c == '\0') {
        fb_csv_reader_fail(p, p->line, "NUL byte in the file (not a text CSV)");
        return -1;
    }
    if (*c == '\n') {
        p->line++;
        p->col = 0;
    } else if (++p->col > FB_CSV_LINE_MAX) {
        fb_csv_reader_fail(p, p->line, "line longer than %d bytes", FB_CSV_LINE_MAX);
        return -1;
    }
    return 0;
}

static void put(struct fb_csv_reader *p, char c)
{
    /* scratch holds len + FB_CSV_FIELDS_MAX + 1 bytes: every byte of input adds at most one
     * here, and every field one NUL. */
    p->scratch[p->used++] = c;
}

/* Is the input at a line end ("\n" or "\r\n")? Consumes it when so. */
static int at_line_end(struct fb_csv_reader *p, int *error)
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

fb_status fb_csv_reader_open(struct fb_csv_reader *p, const char *path, const char *buf,
                             size_t len, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->path = path;
    p->buf = buf;
    p->len = len;
    p->line = 1;
    p->err = err;
    p->errlen = errlen;
    if (len == 0) {
        snprintf(err, errlen, "%s:1: the file is empty (no header)", path);
        return FB_ERR_USAGE;
    }
    /* every byte of input adds at most one byte to a record, and every field one NUL */
    if (!(p->scratch = malloc(len + FB_CSV_FIELDS_MAX + 1))) {
        snprintf(err, errlen, "%s: out of memory reading it", path);
        return FB_ERR_NOMEM;
    }
    return FB_OK;
}

void fb_csv_reader_close(struct fb_csv_reader *p)
{
    free(p->scratch);
    p->scratch = NULL;
}

/* Parses the next record into p->off/p->scratch. Returns 1 with a record, 0 at the end of the
 * input, -1 on a fault (message in p->err). */
int fb_csv_reader_next(struct fb_csv_reader *p)
{
    int error;

    if (p->pos >= p->len)
        return 0;
    p->used = 0;
    p->nfields = 0;
    for (;;) {
        char c;

        if (p->nfields == FB_CSV_FIELDS_MAX) {
            fb_csv_reader_fail(p, p->line, "more than %d fields", FB_CSV_FIELDS_MAX);
            return -1;
        }
        p->off[p->nfields++] = p->used;
        if (p->pos < p->len && p->buf[p->pos] == '"') {
            size_t open_line = p->line;
            if (take(p, &c))
                return -1;
            for (;;) {
                if (p->pos >= p->len) {
                    fb_csv_reader_fail(p, open_line,
                                       "quoted field not closed before the end of the file");
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
                fb_csv_reader_fail(p, p->line,
                                   "'%c' after a closing quote (expected a comma or a line end)",
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
                fb_csv_reader_fail(p, p->line, "quote inside an unquoted field");
                return -1;
            }
            if (c == '\r') {
                fb_csv_reader_fail(p, p->line, "carriage return not followed by a line feed");
                return -1;
            }
            put(p, c);
        }
        put(p, '\0');
    }
}

fb_status fb_csv_reader_slurp(const char *path, char **buf, size_t *len, char *err, size_t errlen)
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
