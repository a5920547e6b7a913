/* Opening and reading the files fabricbench reads back (file_read.h): regular files only,
 * bounded by a cap per kind and a line length, allocation failures kept apart from the end of
 * the file. */
#define _GNU_SOURCE
#include "file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "escape.h"
#include "units.h"

static const struct {
    const char *name;
    size_t cap;
} kinds[FB_FILE_KINDS] = {
    [FB_FILE_RESULTS_CSV] = {"results.csv", (size_t)1 << 30},
    [FB_FILE_JSON] = {"JSON file", (size_t)64 << 20},
    [FB_FILE_NCCL_LOG] = {"NCCL log", (size_t)256 << 20},
    [FB_FILE_LAUNCHES_CSV] = {"launches.csv", (size_t)16 << 20},
    [FB_FILE_PROFILE] = {"profile", (size_t)1 << 20},
    [FB_FILE_MIX] = {"mix", (size_t)64 << 20},
    [FB_FILE_SITE] = {"site file", (size_t)1 << 20},
};

size_t fb_file_cap(enum fb_file_kind kind) { return kinds[kind].cap; }

const char *fb_file_kind_name(enum fb_file_kind kind) { return kinds[kind].name; }

static void too_large(const char *shown, enum fb_file_kind kind, const char *size, char *err,
                      size_t errlen)
{
    char cap[32];

    fb_size_format_named(kinds[kind].cap, cap, sizeof cap);
    snprintf(err, errlen, "%s: %s bytes, more than the %s a %s may hold", shown, size, cap,
             kinds[kind].name);
}

fb_status fb_file_open(const char *path, enum fb_file_kind kind, bool optional, int *fd,
                       size_t *size, char *err, size_t errlen)
{
    char shown[600];
    struct stat sb;
    int f;

    *fd = -1;
    *size = 0;
    fb_escape_str(path, 0, shown, sizeof shown);
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer; fstat then refuses it */
    f = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (f < 0) {
        if (optional && errno == ENOENT)
            return FB_OK;
        snprintf(err, errlen, "cannot open '%s': %s", shown, strerror(errno));
        return FB_ERR_IO;
    }
    if (fstat(f, &sb) != 0) {
        snprintf(err, errlen, "cannot read '%s': %s", shown, strerror(errno));
        close(f);
        return FB_ERR_IO;
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", shown);
        close(f);
        return FB_ERR_USAGE;
    }
    if ((unsigned long long)sb.st_size > kinds[kind].cap) {
        char n[32];
        snprintf(n, sizeof n, "%lld", (long long)sb.st_size);
        too_large(shown, kind, n, err, errlen);
        close(f);
        return FB_ERR_USAGE;
    }
    *fd = f;
    *size = (size_t)sb.st_size;
    return FB_OK;
}

/* Refuses a line longer than FB_FILE_LINE_MAX in buf[0..len). */
static fb_status check_lines(const char *shown, const char *buf, size_t len, char *err,
                             size_t errlen)
{
    size_t line = 1, start = 0;

    for (;;) {
        const char *nl = memchr(buf + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - buf) : len;
        size_t n = end - start;

        if (n && buf[end - 1] == '\r' && nl)
            n--;
        if (n > FB_FILE_LINE_MAX) {
            snprintf(err, errlen, "%s:%zu: line longer than %d bytes", shown, line,
                     FB_FILE_LINE_MAX);
            return FB_ERR_USAGE;
        }
        if (!nl)
            return FB_OK;
        start = end + 1;
        line++;
    }
}

fb_status fb_file_read(const char *path, enum fb_file_kind kind, bool optional, char **buf,
                       size_t *len, char *err, size_t errlen)
{
    char shown[600];
    char *data = NULL;
    size_t size, cap, n = 0;
    fb_status st;
    int fd;

    *buf = NULL;
    *len = 0;
    if ((st = fb_file_open(path, kind, optional, &fd, &size, err, errlen)) != FB_OK || fd < 0)
        return st;
    fb_escape_str(path, 0, shown, sizeof shown);
    /* the size fstat gave, plus room to see that the file grew (or a /proc file of size 0) */
    cap = size + 4096;
    for (;;) {
        ssize_t got;

        if (n == cap || !data) {
            char *grown;
            if (data)
                cap = cap > kinds[kind].cap / 2 ? kinds[kind].cap + 1 : cap * 2;
            if (!(grown = realloc(data, cap + 1))) {
                snprintf(err, errlen, "%s: out of memory reading it (%zu bytes)", shown, cap);
                st = FB_ERR_NOMEM;
                goto out;
            }
            data = grown;
        }
        got = read(fd, data + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(err, errlen, "cannot read '%s': %s", shown, strerror(errno));
            st = FB_ERR_IO;
            goto out;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        if (n > kinds[kind].cap) {
            char capt[32];
            fb_size_format_named(kinds[kind].cap, capt, sizeof capt);
            snprintf(err, errlen, "%s: grew past the %s a %s may hold while it was read", shown,
                     capt, kinds[kind].name);
            st = FB_ERR_USAGE;
            goto out;
        }
    }
    data[n] = '\0';
    st = check_lines(shown, data, n, err, errlen);
out:
    close(fd);
    if (st != FB_OK) {
        free(data);
        return st;
    }
    *buf = data;
    *len = n;
    return FB_OK;
}

bool fb_file_line(const char *text, size_t len, size_t *pos, size_t *lineno, const char **l,
                  size_t *n, bool *nul)
{
    const char *nl, *hash;

    if (*pos >= len)
        return false;
    *l = text + *pos;
    nl = memchr(*l, '\n', len - *pos);
    *n = nl ? (size_t)(nl - *l) : len - *pos;
    (*lineno)++;
    *pos += *n + (nl ? 1 : 0);
    *nul = memchr(*l, '\0', *n) != NULL; /* anywhere in the line, its comment too */
    if ((hash = memchr(*l, '#', *n)))
        *n = (size_t)(hash - *l);
    while (*n && ((*l)[*n - 1] == ' ' || (*l)[*n - 1] == '\t' || (*l)[*n - 1] == '\r'))
        (*n)--;
    while (*n && (**l == ' ' || **l == '\t'))
        (*l)++, (*n)--;
    return true;
}

bool fb_file_line_text(const char *l, size_t n, bool nul, char *buf, size_t buflen, char *why,
                       size_t whylen)
{
    size_t at;

    if (nul) {
        snprintf(why, whylen, "a NUL byte in the line");
        return false;
    }
    if (n >= buflen) {
        snprintf(why, whylen, "line longer than %zu characters", buflen - 1);
        return false;
    }
    memcpy(buf, l, n);
    buf[n] = '\0';
    at = fb_escape_control_but_tab(buf);
    if (buf[at]) {
        char culprit[16], before[80];
        fb_escape(buf + at, (unsigned char)buf[at] == 0xc2 ? 2 : 1, 0, culprit, sizeof culprit);
        fb_escape(buf, at, 40, before, sizeof before);
        snprintf(why, whylen, "control character: %s after '%s'", culprit, before);
        return false;
    }
    return true;
}
