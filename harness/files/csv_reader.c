/* The RFC 4180 record parser (csv_reader.h): records of a CSV file held whole in memory, with
 * line numbers for messages, NUL bytes, control characters in fields and overlong lines
 * refused. */
#include "csv_reader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "file_read.h"

void fb_csv_reader_fail(struct fb_csv_reader *p, size_t line, const char *fmt, ...)
{
    va_list ap;
    char shown[600];
    int n;

    fb_escape_str(p->path, 0, shown, sizeof shown);
    n = line ? snprintf(p->err, p->errlen, "%s:%zu: ", shown, line)
             : snprintf(p->err, p->errlen, "%s: ", shown);

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

/* Adds byte c to the field being read, refusing a control character (TAB allowed), C1 ones
 * included (fb_escape_ends_c1): "path:line: control character in field 'NAME': \x0a after
 * 'text'", the field named by the header. */
static int content(struct fb_csv_reader *p, char c)
{
    size_t field = p->nfields - 1, start = p->off[field];
    unsigned char prev = p->used > start ? (unsigned char)p->scratch[p->used - 1] : 0;
    char name[200], before[120], culprit[16];

    if (c == '\t' || (!fb_escape_is_control((unsigned char)c) &&
                      !fb_escape_ends_c1(prev, (unsigned char)c))) {
        put(p, c);
        return 0;
    }
    /* the refusal: UTF-8's C1 is C2 then this byte */
    bool utf8_c1 = prev == 0xc2 && fb_escape_ends_c1(prev, (unsigned char)c);
    char pair[2] = {(char)prev, c};
    if (field < p->nnames)
        fb_escape_str(p->names + p->name_off[field], 60, name, sizeof name);
    else
        snprintf(name, sizeof name, "column %zu%s", field + 1, p->nnames ? "" : " of the header");
    /* UTF-8's C1 is shown whole (\xc2\x9b), its lead byte not as part of the text before */
    fb_escape(p->scratch + start, p->used - start - (utf8_c1 ? 1 : 0), 40, before, sizeof before);
    if (utf8_c1)
        fb_escape(pair, 2, 0, culprit, sizeof culprit);
    else
        fb_escape(&c, 1, 0, culprit, sizeof culprit);
    /* a line feed has already moved the count on to the next line */
    fb_csv_reader_fail(p, c == '\n' ? p->line - 1 : p->line,
                       "control character in field '%s': %s after '%s'", name, culprit, before);
    return -1;
}

/* Keeps the header's fields (the first record) to name fields in messages. */
static void keep_names(struct fb_csv_reader *p)
{
    /* one record is one line (no field holds a line break): it fits names' room */
    memcpy(p->names, p->scratch, p->used);
    memcpy(p->name_off, p->off, p->nfields * sizeof p->off[0]);
    p->nnames = p->nfields;
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
    p->pos = p->col = fb_file_bom(buf, len); /* a byte-order mark: skipped */
    if (len == p->pos) {
        fb_csv_reader_fail(p, 1, "the file is empty (no header)");
        return FB_ERR_USAGE;
    }
    /* every byte of input adds at most one byte to a record, and every field one NUL */
    if (!(p->scratch = malloc(len + FB_CSV_FIELDS_MAX + 1)) ||
        !(p->names = malloc((len < FB_CSV_LINE_MAX ? len : FB_CSV_LINE_MAX) + FB_CSV_FIELDS_MAX +
                            1))) {
        fb_csv_reader_close(p);
        fb_csv_reader_fail(p, 0, "out of memory reading it");
        return FB_ERR_NOMEM;
    }
    return FB_OK;
}

void fb_csv_reader_close(struct fb_csv_reader *p)
{
    free(p->scratch);
    free(p->names);
    p->scratch = NULL;
    p->names = NULL;
}

/* Parses the next record into p->off/p->scratch. Returns 1 with a record, 0 at the end of the
 * input, -1 on a fault (message in p->err). */
static int next_record(struct fb_csv_reader *p)
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
                    if (content(p, c))
                        return -1;
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
                char shown[8];
                fb_csv_reader_fail(p, p->line,
                                   "'%s' after a closing quote (expected a comma or a line end)",
                                   fb_escape(&c, 1, 0, shown, sizeof shown));
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
            if (content(p, c))
                return -1;
        }
        put(p, '\0');
    }
}

int fb_csv_reader_next(struct fb_csv_reader *p)
{
    int got = next_record(p);

    if (got == 1 && !p->nnames)
        keep_names(p);
    return got;
}
