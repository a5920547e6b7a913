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

#include "escape_check.h"
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
    w = written(put_code_plain, "");
    CHECK_STR(w, "` `");
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
        CHECK(block_ok(w, in));
        free(w);
        w = written(fb_md_put_link, in);
        CHECK(link_ok(w));
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
