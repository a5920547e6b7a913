/* Fuzzes the writers' escaping (harness/core/gp_text.c, md_text.c, xml_text.c): the input, cut
 * at its first NUL, as a gnuplot string expression, a gnuplot comment, Markdown text, a code
 * span and block, a link, XML text and an attribute. Besides not crashing: each is parsed back
 * with the unit test's checks (tests/unit/escape_check.h): the gnuplot expression evaluates to
 * the input and holds no raw line break, the comment and Markdown text decode to it, the code
 * span and block cannot be closed from inside, the XML is well-formed. */
#include "fuzz.h"

#include "escape_check.h"
#include "gp_text.h"
#include "md_text.h"
#include "xml_text.h"

typedef void (*put_fn)(FILE *, const char *);

static char *written(put_fn put, const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    FUZZ_CHECK(f);
    put(f, s);
    fclose(f);
    return buf;
}

static void put_code(FILE *f, const char *s) { fb_md_put_code(f, s, true); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = fuzz_cstr(data, size), *out, *dec, *w;
    size_t need = fb_gp_string(NULL, 0, in);

    out = malloc(need + 1);
    dec = malloc(need + 1);
    FUZZ_CHECK(out && dec);
    FUZZ_CHECK(fb_gp_string(out, need + 1, in) == need && strlen(out) == need);
    FUZZ_CHECK(!has_control(out, "") && gp_decode(out, dec) && strcmp(dec, in) == 0);
    free(out);
    free(dec);
    need = fb_gp_comment(NULL, 0, in);
    out = malloc(need + 1);
    dec = malloc(need + 1);
    FUZZ_CHECK(out && dec);
    fb_gp_comment(out, need + 1, in);
    FUZZ_CHECK(!has_control(out, "") && unescape(out, NULL, dec) && strcmp(dec, in) == 0);
    free(dec);
    w = written(fb_md_put_text, in);
    dec = malloc(strlen(w) + 1);
    FUZZ_CHECK(dec && !has_control(w, "") && unescape(w, "\\`[]<>|&", dec) && !strcmp(dec, in));
    free(dec);
    free(w);
    w = written(put_code, in);
    FUZZ_CHECK(code_ok(w, true));
    free(w);
    w = written(fb_md_put_code_block, in);
    FUZZ_CHECK(block_ok(w, in));
    free(w);
    w = written(fb_md_put_link, in);
    FUZZ_CHECK(link_ok(w));
    free(w);
    w = written(fb_xml_put_text, in);
    FUZZ_CHECK(xml_ok(w, false));
    free(w);
    w = written(fb_xml_put_attr, in);
    FUZZ_CHECK(xml_ok(w, true));
    free(w);
    free(out);
    free(in);
    return 0;
}
