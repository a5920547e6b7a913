/* The escaping of core/gp_text.h, md_text.h and xml_text.h: fixed examples, then 20,000
 * random hostile strings (fuzz_text.h, fixed seed) each parsed back from what was written: a
 * gnuplot string expression evaluates to the input and holds no raw line break; a comment is
 * one line without a trailing backslash; Markdown text decodes to the input with no raw '|',
 * line break or markup; a code span or block cannot be closed from inside; a link holds only
 * safe bytes; XML has only its five entities and no byte XML 1.0 cannot carry. When gnuplot is
 * on PATH, a script of such strings is run: it prints each string back exactly, and the
 * system("touch pwned") among them creates nothing. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_text.h"
#include "gp_text.h"
#include "md_text.h"
#include "test.h"
#include "xml_text.h"

typedef void (*put_fn)(FILE *, const char *);

/* What put writes for s, in a new string (free it). */
static char *written(put_fn put, const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    put(f, s);
    fclose(f);
    return buf;
}

static void put_code_table(FILE *f, const char *s) { fb_md_put_code(f, s, true); }
static void put_code_plain(FILE *f, const char *s) { fb_md_put_code(f, s, false); }

static bool has_control(const char *s, const char *allowed)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 || *p == 0x7f) && !strchr(allowed, *p))
            return true;
    return false;
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

static void examples(void)
{
    char buf[256], *w;

    fb_gp_string(buf, sizeof buf, "it's");
    CHECK_STR(buf, "'it'.\"\\047\".'s'");
    fb_gp_string(buf, sizeof buf, "x\nsystem(\"touch pwned\")\n#");
    CHECK_STR(buf, "'x'.\"\\012\".'system(\"touch pwned\")'.\"\\012\".'#'");
    fb_gp_string(buf, sizeof buf, "");
    CHECK_STR(buf, "''");
    CHECK(fb_gp_string(buf, 4, "abcdef") == 8 && strlen(buf) == 3);
    fb_gp_comment(buf, sizeof buf, "a\\\nb\x7f");
    CHECK_STR(buf, "a\\x5c\\x0ab\\x7f");
    fb_gp_comment(buf, 6, "ab\\cd"); /* cut short: whole escapes only */
    CHECK_STR(buf, "ab");
    w = written(fb_md_put_text, "a|b\n<i>`x`[l](u)&_*");
    CHECK_STR(w, "a\\|b\\x0a\\<i\\>\\`x\\`\\[l\\](u)\\&_*");
    free(w);
    w = written(put_code_table, "a`b``c|");
    CHECK_STR(w, "```a`b``c\\|```");
    free(w);
    w = written(put_code_plain, "`x");
    CHECK_STR(w, "`` `x ``");
    free(w);
    w = written(fb_md_put_code_block, "mpirun ```x``` \n");
    CHECK_STR(w, "````\nmpirun ```x``` \\x0a\n````\n");
    free(w);
    w = written(fb_md_put_link, "a b/../(c)");
    CHECK_STR(w, "a%20b/../%28c%29");
    free(w);
    w = written(fb_xml_put_text, "a<b>&\"'\n\r\x01\xc3\xa9\xff");
    CHECK_STR(w, "a&lt;b&gt;&amp;\"'\n&#13;\\x01\xc3\xa9\\xff");
    free(w);
    w = written(fb_xml_put_attr, "\"'\t\n\xed\xa0\x80\xef\xbf\xbe");
    CHECK_STR(w, "&quot;&apos;&#9;&#10;\\xed\\xa0\\x80\\xef\\xbf\\xbe");
    free(w);
}

/* Random strings through every escaper, each parsed back. */
static void fuzz(void)
{
    char in[200], out[1600], dec[1600];

    for (int i = 0; i < 20000; i++) {
        char *w;
        size_t need;

        fuzz_string(in, sizeof in);
        need = fb_gp_string(out, sizeof out, in);
        CHECK(need < sizeof out && !has_control(out, ""));
        CHECK(gp_decode(out, dec) && strcmp(dec, in) == 0);
        fb_gp_comment(out, sizeof out, in);
        CHECK(!has_control(out, "") && unescape(out, NULL, dec) && strcmp(dec, in) == 0);
        w = written(fb_md_put_text, in);
        CHECK(!has_control(w, "") && unescape(w, "\\`[]<>|&", dec) && strcmp(dec, in) == 0);
        free(w);
        w = written(put_code_table, in);
        CHECK(code_ok(w, true));
        free(w);
        w = written(fb_md_put_code_block, in);
        {
            size_t n = strspn(w, "`"), len = strlen(w);
            size_t nl = strcspn(w, "\n");
            size_t nl2 = nl < len ? nl + 1 + strcspn(w + nl + 1, "\n") : len;
            CHECK(n >= 3 && nl == n && len > 2 * n + 2 && w[len - 1] == '\n' &&
                  nl2 == len - n - 2 && longest_run(in, '`') < n);
        }
        free(w);
        w = written(fb_md_put_link, in);
        for (const char *p = w; *p; p++)
            CHECK(strchr("-._~/%", *p) || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
                  (*p >= 'A' && *p <= 'Z'));
        free(w);
        w = written(fb_xml_put_text, in);
        CHECK(xml_ok(w, false));
        free(w);
        w = written(fb_xml_put_attr, in);
        CHECK(xml_ok(w, true));
        free(w);
        if (fb_test_failures) {
            fprintf(stderr, "fuzz: failed on string %d\n", i);
            return;
        }
    }
}

static bool gnuplot_on_path(void)
{
    return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/* gnuplot itself reads the expressions back: each prints its string exactly, nothing runs. */
static void through_gnuplot(void)
{
    char dir[] = "/tmp/fb_test_gp_XXXXXX", path[64], cmd[200], in[200], expr[1600];
    char *want = NULL, *got;
    size_t wlen = 0, glen;
    FILE *gp, *expect;

    if (!gnuplot_on_path()) {
        printf("gnuplot not on PATH: the expressions are not run through it\n");
        return;
    }
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/t.gp", dir);
    gp = fopen(path, "w");
    expect = open_memstream(&want, &wlen);
    fprintf(gp, "set print 'printed.txt'\n");
    for (int i = 0; i < 300; i++) {
        fuzz_string(in, sizeof in);
        if (i == 0)
            strcpy(in, "x\nsystem(\"touch pwned\")\n#");
        fb_gp_string(expr, sizeof expr, in);
        fprintf(gp, "s = %s\nprint s\n", expr);
        fprintf(expect, "%s\n", in);
    }
    fclose(gp);
    fclose(expect);
    snprintf(cmd, sizeof cmd, "cd %s && gnuplot t.gp", dir);
    CHECK(system(cmd) == 0);
    snprintf(path, sizeof path, "%s/pwned", dir);
    CHECK(access(path, F_OK) != 0);
    snprintf(path, sizeof path, "%s/printed.txt", dir);
    gp = fopen(path, "r");
    CHECK(gp != NULL);
    if (gp) {
        got = calloc(1, wlen + 2);
        glen = fread(got, 1, wlen + 1, gp);
        fclose(gp);
        CHECK(glen == wlen && memcmp(got, want, wlen) == 0);
        free(got);
    }
    free(want);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

int main(void)
{
    examples();
    fuzz();
    through_gnuplot();
    TEST_DONE();
}
