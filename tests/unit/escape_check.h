/* Checks of what core/gp_text.h, md_text.h and xml_text.h write, shared by the unit test
 * (test_text_escape.c) and the libFuzzer target (tests/fuzz/fuzz_escape.c): each parses the
 * escaped text back, or says whether it is well-formed for its format. */
#ifndef FB_TEST_ESCAPE_CHECK_H
#define FB_TEST_ESCAPE_CHECK_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "gp_text.h"
#include "md_text.h"
#include "xml_text.h"

typedef void (*put_fn)(FILE *, const char *);

/* What put writes for s, in a new string (free it); NULL when out of memory. */
static char *written(put_fn put, const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    if (!f)
        return NULL;
    put(f, s);
    fclose(f);
    return buf;
}

static void put_code_table(FILE *f, const char *s) { fb_md_put_code(f, s, true); }

static bool has_control(const char *s, const char *allowed)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 || *p == 0x7f) && !strchr(allowed, *p))
            return true;
    return false;
}

/* Whether s is UTF-8 with no C1 control in it (U+0080-U+009F): Markdown's text, whatever the
 * input held. */
static bool utf8_clean(const char *s)
{
    for (const char *p = s; *p;) {
        unsigned cp = 0;
        int n = fb_utf8_len(p, &cp);
        if (n == 0 || (cp >= 0x80 && cp <= 0x9f))
            return false;
        p += n;
    }
    return true;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Parses a gnuplot string expression ('..' and "\ooo" pieces joined by '.') into out; false
 * when it is not one, a single-quoted piece holds a quote, or a double-quoted piece holds
 * anything but octal escapes. */
static bool gp_decode(const char *e, char *out)
{
    size_t n = 0;

    for (bool first = true; *e; first = false) {
        if (!first && *e++ != '.')
            return false;
        if (*e == '\'') {
            for (e++;; e++) {
                if (!*e)
                    return false;
                if (*e == '\'')
                    break;
                else
                    out[n++] = *e;
            }
            e++;
        } else if (*e == '"') {
            for (e++; *e != '"'; e += 4) {
                if (e[0] != '\\' || e[1] < '0' || e[1] > '3' || e[2] < '0' || e[2] > '7' ||
                    e[3] < '0' || e[3] > '7')
                    return false;
                out[n++] = (char)((e[1] - '0') * 64 + (e[2] - '0') * 8 + (e[3] - '0'));
            }
            e++;
        } else {
            return false;
        }
    }
    out[n] = '\0';
    return true;
}

/* Decodes \xNN and, when set is given, a backslash before one of set; anything else literal. */
static bool unescape(const char *e, const char *set, char *out)
{
    size_t n = 0;

    for (; *e; e++) {
        if (*e == '\\' && e[1] == 'x' && hexval(e[2]) >= 0 && hexval(e[3]) >= 0) {
            out[n++] = (char)(hexval(e[2]) * 16 + hexval(e[3]));
            e += 3;
        } else if (*e == '\\' && set && e[1] && strchr(set, e[1])) {
            out[n++] = *++e;
        } else if (*e == '\\' || (set && strchr(set, *e))) {
            return false; /* a backslash or a markup byte left bare */
        } else {
            out[n++] = *e;
        }
    }
    out[n] = '\0';
    return true;
}

static size_t longest_run(const char *s, char c)
{
    size_t best = 0, run = 0;
    for (; *s; s++) {
        run = *s == c ? run + 1 : 0;
        best = run > best ? run : best;
    }
    return best;
}

/* A code span: a fence of n backquotes at each end, no run of n inside. */
static bool code_ok(const char *w, bool table)
{
    size_t len = strlen(w), n = strspn(w, "`");
    char *inner;
    bool ok;

    if (strcmp(w, "` `") == 0)
        return true; /* the empty span */
    if (!n || len < 2 * n || strspn(w + len - n, "`") != n ||
        (len > 2 * n && w[len - n - 1] == '`'))
        return false;
    inner = strndup(w + n, len - 2 * n);
    ok = longest_run(inner, '`') < n && !has_control(inner, "");
    for (const char *p = inner; ok && table && (p = strchr(p, '|')); p++)
        ok = p > inner && p[-1] == '\\';
    free(inner);
    return ok;
}

static bool xml_ok(const char *w, bool attr)
{
    static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#9;",
                                      "&#10;", "&#13;"};
    for (const char *p = w; *p; p++) {
        if (*p == '&') {
            bool known = false;
            for (size_t i = 0; i < sizeof ent / sizeof ent[0] && !known; i++)
                known = strncmp(p, ent[i], strlen(ent[i])) == 0;
            if (!known)
                return false;
        }
        if (*p == '<' || *p == '>' || (attr && strchr("\"'\n\t\r", *p)) || *p == '\r')
            return false;
    }
    return !has_control(w, attr ? "" : "\n\t");
}

/* A fenced code block of in: its fence (3 or more, longer than any run inside) on a line, in on
 * one line, the fence again. */
static bool block_ok(const char *w, const char *in)
{
    size_t n = strspn(w, "`"), len = strlen(w);
    size_t nl = strcspn(w, "\n");
    size_t nl2 = nl < len ? nl + 1 + strcspn(w + nl + 1, "\n") : len;

    return n >= 3 && nl == n && len > 2 * n + 2 && w[len - 1] == '\n' && nl2 == len - n - 2 &&
           longest_run(in, '`') < n && !has_control(w, "\n");
}

/* A link's destination: unreserved bytes, '/' and %XX only. */
static bool link_ok(const char *w)
{
    for (const char *p = w; *p; p++)
        if (!(strchr("-._~/", *p) || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
              (*p >= 'A' && *p <= 'Z') ||
              (*p == '%' && hexval(p[1]) >= 0 && hexval(p[2]) >= 0)))
            return false;
    return true;
}

/* in through every escaper, each result checked: NULL when all hold, else the one that broke. */
static const char *escape_check_all(const char *in)
{
    size_t need = fb_gp_string(NULL, 0, in) + fb_gp_comment(NULL, 0, in) + 8 * strlen(in) + 8;
    char *out = malloc(need), *dec = malloc(need), *w = NULL;
    const char *bad = NULL;

    if (!out || !dec)
        bad = "out of memory";
    if (!bad && (fb_gp_string(out, need, in) >= need || has_control(out, "") ||
                 !gp_decode(out, dec) || strcmp(dec, in) != 0))
        bad = "fb_gp_string";
    if (!bad && (fb_gp_comment(out, need, in) >= need || has_control(out, "") ||
                 !unescape(out, NULL, dec) || strcmp(dec, in) != 0))
        bad = "fb_gp_comment";
    if (!bad && (!(w = written(fb_md_put_text, in)) || has_control(w, "") || !utf8_clean(w) ||
                 !unescape(w, "\\`[]<>|&", dec) || strcmp(dec, in) != 0))
        bad = "fb_md_put_text";
    free(w);
    w = NULL; /* a failed check skips the next, whose free would be this one's again */
    if (!bad && (!(w = written(put_code_table, in)) || !code_ok(w, true) || !utf8_clean(w)))
        bad = "fb_md_put_code";
    free(w);
    w = NULL;
    if (!bad && (!(w = written(fb_md_put_code_block, in)) || !block_ok(w, in) ||
                 !utf8_clean(w)))
        bad = "fb_md_put_code_block";
    free(w);
    w = NULL;
    if (!bad && (!(w = written(fb_md_put_link, in)) || !link_ok(w)))
        bad = "fb_md_put_link";
    free(w);
    w = NULL;
    if (!bad && (!(w = written(fb_xml_put_text, in)) || !xml_ok(w, false)))
        bad = "fb_xml_put_text";
    free(w);
    w = NULL;
    if (!bad && (!(w = written(fb_xml_put_attr, in)) || !xml_ok(w, true)))
        bad = "fb_xml_put_attr";
    free(w);
    free(out);
    free(dec);
    return bad;
}

#endif
