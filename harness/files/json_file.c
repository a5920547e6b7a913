/* Reading and writing JSON files (json_file.h); a number read must be finite. */
#include "json_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "escape.h"
#include "file_read.h"
#include "log.h"
#include "units.h"

/* The value of hex digit c, -1 when it is none. */
static int hex(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The character of the escape at s[0..n) (s[0] is the backslash) and its length; -1 for one
 * that is not a control character's. */
static int escaped(const char *s, size_t n, size_t *len)
{
    *len = 2;
    if (n < 2)
        return -1;
    switch (s[1]) {
    case 'b': return 0x08;
    case 'f': return 0x0c;
    case 'n': return 0x0a;
    case 'r': return 0x0d;
    case 't': return 0x09;
    case 'u': {
        int v = 0;
        if (n < 6)
            return -1;
        for (size_t k = 2; k < 6; k++) {
            if (hex(s[k]) < 0)
                return -1;
            v = v * 16 + hex(s[k]);
        }
        *len = 6;
        return v;
    }
    default: return -1;
    }
}

/* Refuses a control character (below 0x20 but TAB, or 0x7f), raw or escaped, in any string of
 * the valid JSON text[0..len): "path:line: control character in field 'KEY': \x0a after
 * 'text'", KEY the string's own key or the last key before it. */
static fb_status check_strings(const char *shown, const char *text, size_t len, char *err,
                               size_t errlen)
{
    char key[200] = "(top level)";
    size_t line = 1;

    for (size_t i = 0; i < len; i++) {
        size_t j, k, start_line = line, bad_at = 0, bad_line = 0;
        int bad = -1;

        if (text[i] == '\n')
            line++;
        if (text[i] != '"')
            continue;
        for (j = i + 1; j < len && text[j] != '"'; j++) {
            unsigned char c = (unsigned char)text[j];
            size_t n = 1;
            int v = c;
            bool c1;

            /* C1 too: \u0080-\u009f, or as UTF-8 bytes (fb_escape_ends_c1) */
            if (c == '\\') {
                v = escaped(text + j, len - j, &n);
                c1 = v >= 0x80 && v <= 0x9f;
            } else {
                c1 = fb_escape_ends_c1(j > i + 1 ? (unsigned char)text[j - 1] : 0, c);
            }
            if (bad < 0 && v >= 0 && v != '\t' &&
                ((fb_escape_is_control((unsigned char)v) && v < 0x80) || c1)) {
                bad = v;
                bad_at = j;
                bad_line = line;
            }
            if (c == '\n')
                line++;
            j += n - 1;
        }
        for (k = j + 1; k < len && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r' ||
                                    text[k] == '\n');
             k++)
            ;
        if (k < len && text[k] == ':' && bad < 0)
            fb_escape(text + i + 1, j - i - 1, 60, key, sizeof key);
        if (bad >= 0) {
            char c = (char)bad, culprit[8], before[120];
            fb_escape(&c, 1, 0, culprit, sizeof culprit);
            fb_escape(text + i + 1, bad_at - i - 1, 40, before, sizeof before);
            snprintf(err, errlen, "%s:%zu: control character in field '%s': %s after '%s'",
                     shown, bad_line ? bad_line : start_line,
                     k < len && text[k] == ':' ? "(a key)" : key, culprit, before);
            return FB_ERR_USAGE;
        }
        i = j;
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
    char *text = NULL, shown[600];
    size_t len = 0, line = 1, bom;
    const char *at;
    fb_status st;

    *out = NULL;
    st = fb_file_read(path, FB_FILE_JSON, optional, &text, &len, err, errlen);
    if (st == FB_ERR_IO)
        st = FB_ERR_USAGE;
    if (st != FB_OK || !text)
        goto out;
    fb_escape_str(path, 0, shown, sizeof shown);
    bom = fb_file_bom(text, len); /* a byte-order mark: skipped */
    errno = 0;
    const char *end = NULL;
    *out = cJSON_ParseWithLengthOpts(text + bom, len - bom, &end, false);
    if (*out && end && end[strspn(end, " \t\r\n")] != '\0' && end < text + len) {
        /* text after the object ("{...} junk", "{...}{...}"): not one JSON object */
        size_t at_line = 1;
        const char *extra = end + strspn(end, " \t\r\n");
        for (const char *c = text; c < extra; c++)
            at_line += *c == '\n';
        snprintf(err, errlen, "%s:%zu: not a JSON object (text after its end)", shown, at_line);
        cJSON_Delete(*out);
        *out = NULL;
        st = FB_ERR_USAGE;
        goto out;
    }
    if (*out && cJSON_IsObject(*out)) {
        if ((st = check_strings(shown, text + bom, len - bom, err, errlen)) != FB_OK ||
            (st = check_numbers(shown, text + bom, len - bom, err, errlen)) != FB_OK) {
            cJSON_Delete(*out);
            *out = NULL;
        }
        goto out;
    }
    if (!*out && errno == ENOMEM) {
        snprintf(err, errlen, "%s: out of memory reading it", shown);
        st = FB_ERR_NOMEM;
        goto out;
    }
    /* the line where parsing stopped; line 1 for valid JSON of another type */
    at = cJSON_GetErrorPtr();
    if (*out || !at || at < text + bom || at > text + len)
        at = text;
    for (const char *c = text; c < at; c++)
        line += *c == '\n';
    snprintf(err, errlen, "%s:%zu: not a JSON object%s", shown, line,
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
