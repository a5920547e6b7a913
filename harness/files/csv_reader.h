/* Reading CSV: an RFC 4180 record parser over a file held whole in memory (results.csv,
 * launches.csv; read with file_read.h). Quoted fields may hold commas and quotes (""); lines end
 * in LF or CRLF. No field may hold a control character (a byte below 0x20 other than TAB, or
 * 0x7f), a line break included: fabricbench writes none. The first fault ends the read with
 * "path:line: what" in the caller's buffer, file text in it escaped (escape.h). */
#ifndef FB_CSV_READER_H
#define FB_CSV_READER_H

#include <stddef.h>

#include "log.h"
#include "status.h"

/* No line fabricbench writes comes near this; a longer one is not one of our CSV files. */
#define FB_CSV_LINE_MAX 65536
/* More fields than this in one record is refused before they are counted further. */
#define FB_CSV_FIELDS_MAX 64

/* The parser over buf[0..len) (fb_csv_reader_open sets it up). */
struct fb_csv_reader {
    const char *path;
    const char *buf;
    size_t len, pos;
    size_t line;      /* line of buf[pos] */
    size_t col;       /* bytes since the start of that line */
    char *scratch;    /* the record's unquoted fields, each NUL-terminated */
    size_t used;
    size_t nfields;
    size_t off[FB_CSV_FIELDS_MAX];
    char *err;
    size_t errlen;
    char *names;      /* the header's fields (the first record), to name fields in messages */
    size_t name_off[FB_CSV_FIELDS_MAX];
    size_t nnames;
};

/* Starts reading buf[0..len) (the file `path`, named in messages; buf is borrowed). An empty
 * file is FB_ERR_USAGE ("path:1: the file is empty (no header)"), FB_ERR_NOMEM when the
 * record buffer cannot be had; either way with the message in err, and nothing to close. */
fb_status fb_csv_reader_open(struct fb_csv_reader *p, const char *path, const char *buf,
                             size_t len, char *err, size_t errlen);

/* Frees the record buffer; accepts a reader that fb_csv_reader_open refused, or a zeroed one. */
void fb_csv_reader_close(struct fb_csv_reader *p);

/* Parses the next record into off/scratch. 1 with a record, 0 at the end of the input, -1 on a
 * fault (the message in err): among them "path:line: control character in field 'NAME': \x0a
 * after 'text'" (NAME from the header). */
int fb_csv_reader_next(struct fb_csv_reader *p);

/* Field i of the record just parsed (i < nfields), NUL-terminated, unquoted. */
static inline const char *fb_csv_reader_field(const struct fb_csv_reader *p, size_t i)
{
    return p->scratch + p->off[i];
}

/* Writes "path:line: " (line 0: "path: ") and the message into err, the path escaped. */
void fb_csv_reader_fail(struct fb_csv_reader *p, size_t line, const char *fmt, ...)
    FB_PRINTF(3, 4);

#endif
