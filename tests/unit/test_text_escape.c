/* The escaping of core/gp_text.h, md_text.h and xml_text.h: fixed examples, then 20,000
 * random hostile strings (fuzz_text.h, fixed seed) each parsed back from what was written: a
 * gnuplot string expression evaluates to the input and holds no raw line break; a comment is
 * one line without a trailing backslash; Markdown text decodes to the input with no raw '|',
 * line break or markup; a code span or block cannot be closed from inside; a link holds only
 * safe bytes; XML has only its five entities and no byte XML 1.0 cannot carry. When gnuplot is
 * on PATH, a script of such strings is run: it prints each string back exactly, and the
 * system("touch pwned") among them creates nothing. Then core/file_name.h's safe and unique
 * file names. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "escape.h"
#include "escape_check.h"
#include "file_name.h"
#include "fuzz_text.h"
#include "gp_text.h"
#include "md_text.h"
#include "test.h"
#include "xml_text.h"

static void put_code_plain(FILE *f, const char *s) { fb_md_put_code(f, s, false); }

/* put writes want for in. */
static void expect(put_fn put, const char *in, const char *want)
{
    char *w = written(put, in);
    CHECK_STR(w ? w : "(out of memory)", want);
    free(w);
}

static void examples(void)
{
    char buf[256];

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
    expect(fb_md_put_text, "a|b\n<i>`x`[l](u)&_*", "a\\|b\\x0a\\<i\\>\\`x\\`\\[l\\](u)\\&_*");
    expect(put_code_table, "a`b``c|", "```a`b``c\\|```");
    expect(put_code_plain, "", "` `");
    expect(put_code_plain, "`x", "`` `x ``");
    expect(fb_md_put_code_block, "mpirun ```x``` \n", "````\nmpirun ```x``` \\x0a\n````\n");
    expect(fb_md_put_link, "a b/../(c)", "a%20b/../%28c%29");
    expect(fb_xml_put_text, "a<b>&\"'\n\r\x01\xc3\xa9\xff",
           "a&lt;b&gt;&amp;\"'\n&#13;\\x01\xc3\xa9\\xff");
    expect(fb_xml_put_attr, "\"'\t\n\xed\xa0\x80\xef\xbf\xbe",
           "&quot;&apos;&#9;&#10;\\xed\\xa0\\x80\\xef\\xbf\\xbe");
}

/* Random strings through every escaper, each parsed back. */
static void fuzz(void)
{
    char in[200];

    for (int i = 0; i < 20000; i++) {
        const char *bad;

        fuzz_string(in, sizeof in);
        if ((bad = escape_check_all(in))) {
            fprintf(stderr, "fuzz: %s broke on string %d\n", bad, i);
            fb_test_failures++;
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

/* fb_gp_tic_label: node names made tics labels inside a double-quoted string (locate's heat
 * map) run no command and keep the script valid; a plain name stays itself. */
static void tic_labels_through_gnuplot(void)
{
    static const char *const names[] = {"node`touch pwned`", "a\"b", "c\\d", "gpu01", "it's"};
    char dir[] = "/tmp/fb_test_tics_XXXXXX", path[64], cmd[200], q[200];
    FILE *gp;

    CHECK(fb_gp_tic_label(q, sizeof q, "gpu01") == 7 && strcmp(q, "'gpu01'") == 0);
    CHECK(fb_gp_tic_label(q, sizeof q, "a`id`") == 7 && strcmp(q, "'a_id_'") == 0);
    if (!gnuplot_on_path()) {
        printf("gnuplot not on PATH: the tics labels are not run through it\n");
        return;
    }
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/t.gp", dir);
    gp = fopen(path, "w");
    CHECK(gp != NULL);
    if (!gp)
        return;
    fprintf(gp, "set print 'printed.txt'\nlabels = \"");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        fb_gp_tic_label(q, sizeof q, names[i]);
        fprintf(gp, "%s%s %zu", i ? ", " : "", q, i);
    }
    fprintf(gp, "\"\neval \"set xtics (\" . labels . \")\"\nprint 'done'\n");
    fclose(gp);
    snprintf(cmd, sizeof cmd, "cd %s && gnuplot t.gp 2>/dev/null", dir);
    system(cmd); /* "it's" made '_' in its escape: a syntax error is fine, a command is not */
    snprintf(path, sizeof path, "%s/pwned", dir);
    CHECK(access(path, F_OK) != 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* fb_escape_control_at: C0, DEL and C1 (as UTF-8 and as a lone byte) are found; UTF-8 letters,
 * whose continuation bytes may lie in 0x80-0x9f, are not. */
static void control_at(void)
{
    CHECK(fb_escape_control_at("plain/run-1") == 11);
    CHECK(fb_escape_control_at("a\nb") == 1);
    CHECK(fb_escape_control_at("ab\x7f") == 2);
    CHECK(fb_escape_control_at("x\xc2\x9b[31m") == 1);   /* CSI as UTF-8 */
    CHECK(fb_escape_control_at("xy\x9b[31m") == 2);       /* CSI as a lone byte */
    CHECK(fb_escape_control_at("caf\xc3\xa9") == 5);     /* e acute */
    CHECK(fb_escape_control_at("\xc4\x80\xe2\x80\x9c") == 5); /* A macron, a left quote */
    CHECK(fb_escape_control_at("\xc2\xa0") == 2);         /* no-break space: not a control */
}

/* fb_utf8_invalid_at: RFC 3629's shortest forms only. */
static void utf8(void)
{
    unsigned cp = 0;

    CHECK(fb_utf8_invalid_at("abc") == 3);
    CHECK(fb_utf8_invalid_at("a\xc3\xa9" "b \xe2\x9c\x93 \xf0\x9f\x98\x80") == 13);
    CHECK(fb_utf8_invalid_at("a\xc3") == 1);             /* cut by the end */
    CHECK(fb_utf8_invalid_at("ab\xe9z") == 2);           /* Latin-1 */
    CHECK(fb_utf8_invalid_at("\xc0\xaf") == 0);          /* overlong '/' */
    CHECK(fb_utf8_invalid_at("\xe0\x80\x80") == 0);      /* overlong */
    CHECK(fb_utf8_invalid_at("\xed\xa0\x80") == 0);      /* a surrogate */
    CHECK(fb_utf8_invalid_at("\xf4\x90\x80\x80") == 0);  /* above U+10FFFF */
    CHECK(fb_utf8_invalid_at("\x80") == 0);              /* a lone continuation byte */
    CHECK(fb_utf8_len("\xef\xbf\xbe", &cp) == 3 && cp == 0xfffe);
    CHECK(fb_utf8_len("\xf4\x8f\xbf\xbf", &cp) == 4 && cp == 0x10ffff);
}

static bool in_list(const char *name, void *ctx)
{
    for (const char *const *l = ctx; *l; l++)
        if (strcmp(*l, name) == 0)
            return true;
    return false;
}

/* fb_file_name_safe keeps letters, digits and what it is told; fb_file_name_unique numbers a
 * name already taken, the number past any taken one, the original cut so that it fits. */
static void file_names(void)
{
    char s[64] = "a/../b c.d\x1b\xff-_Z9";
    fb_file_name_safe(s, "_-");
    CHECK_STR(s, "a____b_c_d__-_Z9");
    snprintf(s, sizeof s, "run.1/..");
    fb_file_name_safe(s, "._-");
    CHECK_STR(s, "run.1_..");

    const char *taken[] = {"p2p_bw", "p2p_bw_2", "compare-a-b", NULL};
    char n[16] = "p2p_bw";
    fb_file_name_unique(n, sizeof n, "_", in_list, taken);
    CHECK_STR(n, "p2p_bw_3");
    snprintf(n, sizeof n, "free");
    fb_file_name_unique(n, sizeof n, "_", in_list, taken);
    CHECK_STR(n, "free");
    snprintf(n, sizeof n, "compare-a-b");
    fb_file_name_unique(n, sizeof n, "-", in_list, taken);
    CHECK_STR(n, "compare-a-b-2");
    /* a name as long as the buffer: cut so that "_2" fits in 8 bytes */
    const char *full[] = {"abcdefg", NULL};
    char m[8] = "abcdefg";
    CHECK(fb_file_name_unique(m, sizeof m, "_", in_list, full));
    CHECK_STR(m, "abcde_2");
    /* a buffer with no room for a number beside the name: refused at once, the name kept */
    char t[3] = "ab";
    const char *ab[] = {"ab", NULL};
    CHECK(!fb_file_name_unique(t, sizeof t, "_", in_list, ab));
    CHECK_STR(t, "ab");
}

int main(void)
{
    utf8();
    control_at();
    examples();
    fuzz();
    through_gnuplot();
    tic_labels_through_gnuplot();
    file_names();
    TEST_DONE();
}
