/* Reading and writing JSON files (json_file.h); a number read must be finite. */
#include "json_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "log.h"
#include "units.h"

/* The whole file, NUL-terminated, into *text. */
static fb_status read_all(FILE *f, const char *path, char **text, size_t *len, char *err,
                          size_t errlen)
{
    long size = -1;

    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
        return FB_ERR_USAGE;
    }
    if ((size_t)size > FB_JSON_FILE_MAX) {
        snprintf(err, errlen, "%s: %ld bytes, more than the %zu MiB a JSON file may hold", path,
                 size, FB_JSON_FILE_MAX >> 20);
        return FB_ERR_USAGE;
    }
    if (!(*text = malloc((size_t)size + 1))) {
        snprintf(err, errlen, "out of memory reading '%s'", path);
        return FB_ERR_NOMEM;
    }
    *len = fread(*text, 1, (size_t)size, f);
    (*text)[*len] = '\0';
    if (*len != (size_t)size) {
        snprintf(err, errlen, "cannot read '%s'", path);
        return FB_ERR_USAGE;
    }
    return FB_OK;
}

/* Every number of a JSON text cJSON accepted, checked with the one strict parser: cJSON
 * reads 1e999 as inf, which no reader can judge. Outside strings a number starts with '-' or a
 * digit (true, false and null hold neither); its token is what cJSON's strtod took. FB_OK, or
 * FB_ERR_USAGE with "path:line:column: what" in err. */
static fb_status check_numbers(const char *path, const char *text, size_t len, char *err,
                               size_t errlen)
{
    size_t line = 1, col = 1, i = 0;
    bool in_string = false;
    char why[200];
    double v;

    while (i < len) {
        char c = text[i];
        if (in_string) {
            if (c == '\\' && i + 1 < len) {
                i += 2;
                col += 2;
                continue;
            }
            in_string = c != '"';
        } else if (c == '"') {
            in_string = true;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            size_t n = strspn(text + i, "0123456789+-eE.");
            if (n > len - i)
                n = len - i;
            if (fb_decimal_parse(text + i, n, &v, why, sizeof why) != FB_OK) {
                snprintf(err, errlen, "%s:%zu:%zu: %s", path, line, col, why);
                return FB_ERR_USAGE;
            }
            i += n;
            col += n;
            continue;
        }
        if (c == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
        i++;
    }
    return FB_OK;
}

fb_status fb_json_file_read(const char *path, bool optional, cJSON **out, char *err,
                            size_t errlen)
{
    FILE *f;
    char *text = NULL;
    size_t len = 0, line = 1;
    const char *at;
    fb_status st;

    *out = NULL;
    if (!(f = fopen(path, "rb"))) {
        if (optional && errno == ENOENT)
            return FB_OK;
        snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
        return FB_ERR_USAGE;
    }
    st = read_all(f, path, &text, &len, err, errlen);
    fclose(f);
    if (st != FB_OK)
        goto out;
    *out = cJSON_ParseWithLength(text, len);
    if (*out && cJSON_IsObject(*out)) {
        if ((st = check_numbers(path, text, len, err, errlen)) != FB_OK) {
            cJSON_Delete(*out);
            *out = NULL;
        }
        goto out;
    }
    /* the line where parsing stopped; line 1 for valid JSON of another type */
    at = cJSON_GetErrorPtr();
    if (*out || !at || at < text || at > text + len)
        at = text;
    for (const char *c = text; c < at; c++)
        line += *c == '\n';
    snprintf(err, errlen, "%s:%zu: not a JSON object%s", path, line,
             *out ? "" : " (not valid JSON at this line)");
    cJSON_Delete(*out);
    *out = NULL;
    st = FB_ERR_USAGE;
out:
    free(text);
    return st;
}

fb_status fb_json_file_write(const char *path, const cJSON *json)
{
    char *text = NULL, *withnl = NULL;
    size_t len;
    fb_status st = FB_ERR_NOMEM;

    if (!path || !json)
        return FB_ERR_USAGE;
    if (!(text = cJSON_Print(json)))
        goto out;
    len = strlen(text);
    if (!(withnl = malloc(len + 2)))
        goto out;
    memcpy(withnl, text, len);
    withnl[len++] = '\n';
    withnl[len] = '\0';
    st = fb_atomic_write(path, withnl, len);
out:
    if (st == FB_ERR_NOMEM)
        fb_error("out of memory while writing '%s'", path);
    cJSON_free(text);
    free(withnl);
    return st;
}
