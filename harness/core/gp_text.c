/* gnuplot string expressions and comment text (gp_text.h). */
#include "gp_text.h"

#include <stdbool.h>
#include <string.h>

/* Where the text goes: a buffer (counted even past its end, as snprintf) or a FILE. A piece
 * (one escape at most) goes into the buffer whole or not at all, and nothing after one that did
 * not fit: a comment cut short never ends in half an escape's backslash. */
struct sink {
    FILE *f;
    char *buf;
    size_t len, used, kept;
    bool full;
};

static void put(struct sink *k, const char *s, size_t n)
{
    if (k->f) {
        fwrite(s, 1, n, k->f);
    } else if (!k->full && k->kept + n < k->len) {
        memcpy(k->buf + k->kept, s, n);
        k->kept += n;
    } else {
        k->full = true;
    }
    k->used += n;
}

static void finish(struct sink *k)
{
    if (!k->f && k->len)
        k->buf[k->kept] = '\0';
}

static bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

/* Bytes written as octal escapes: control bytes, and the single quote, which gnuplot's own
 * doubling ('it''s') does not survive at a string's start or twice in a row ('''x' is ''
 * then 'x'). */
static bool is_octal(unsigned char c) { return is_control(c) || c == '\''; }

static void string_expr(struct sink *k, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    bool first = true;

    if (!*p) {
        put(k, "''", 2);
        return;
    }
    while (*p) {
        bool ctl = is_octal(*p);

        if (!first)
            put(k, ".", 1);
        first = false;
        put(k, ctl ? "\"" : "'", 1);
        for (; *p && is_octal(*p) == ctl; p++) {
            char oct[5];
            if (ctl) {
                oct[0] = '\\';
                oct[1] = (char)('0' + (*p >> 6));
                oct[2] = (char)('0' + ((*p >> 3) & 7));
                oct[3] = (char)('0' + (*p & 7));
                put(k, oct, 4);
            } else {
                put(k, (const char *)p, 1);
            }
        }
        put(k, ctl ? "\"" : "'", 1);
    }
}

static void comment(struct sink *k, const char *s)
{
    static const char hex[] = "0123456789abcdef";

    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (is_control(*p) || *p == '\\') {
            char e[4] = {'\\', 'x', hex[*p >> 4], hex[*p & 15]};
            put(k, e, 4);
        } else {
            put(k, (const char *)p, 1);
        }
    }
}

size_t fb_gp_string(char *dst, size_t len, const char *s)
{
    struct sink k = {.buf = dst, .len = len};
    string_expr(&k, s);
    finish(&k);
    return k.used;
}

void fb_gp_put_string(FILE *f, const char *s)
{
    struct sink k = {.f = f};
    string_expr(&k, s);
}

size_t fb_gp_comment(char *dst, size_t len, const char *s)
{
    struct sink k = {.buf = dst, .len = len};
    comment(&k, s);
    finish(&k);
    return k.used;
}

void fb_gp_put_comment(FILE *f, const char *s)
{
    struct sink k = {.f = f};
    comment(&k, s);
}

size_t fb_gp_tic_label(char *dst, size_t len, const char *s)
{
    size_t need = fb_gp_string(dst, len, s);

    for (char *c = dst; len > 0 && *c; c++)
        if (*c == '"' || *c == '\\' || *c == '`')
            *c = '_';
    return need;
}
