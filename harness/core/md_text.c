/* Markdown text, code spans, code blocks and link destinations (md_text.h). */
#include "md_text.h"

#include <string.h>

#include "escape.h"

static void put_hex(FILE *f, unsigned char c) { fprintf(f, "\\x%02x", c); }

/* How many bytes at p are shown as \xNN: 1 for a control byte (below 0x20, 0x7f) or a byte
 * that is not UTF-8, 2 for a C1 control in UTF-8 (C2 80 to C2 9F, which terminals obey); 0
 * when the character there is written as it is (its length in *n). A Markdown file is UTF-8
 * text: a run folder's name with 0xff or U+009B reaches it as \xff, \xc2\x9b. */
static size_t hex_bytes(const unsigned char *p, size_t *n)
{
    unsigned cp;
    int len;

    *n = 1;
    if (*p < 0x20 || *p == 0x7f)
        return 1;
    if (*p < 0x80)
        return 0;
    if ((len = fb_utf8_len((const char *)p, &cp)) == 0)
        return 1;
    if (cp >= 0x80 && cp <= 0x9f)
        return 2;
    *n = (size_t)len;
    return 0;
}

/* Writes s's bytes, each control or non-UTF-8 byte as \xNN, each byte of `markup` after a
 * backslash (none for code: its text is literal), '|' escaped where `bar`. */
static void put_bytes(FILE *f, const char *s, const char *markup, bool bar)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
        size_t n, h = hex_bytes(p, &n);
        if (h) {
            for (size_t i = 0; i < h; i++)
                put_hex(f, p[i]);
            p += h;
        } else if ((markup && strchr(markup, *p)) || (bar && *p == '|')) {
            fprintf(f, "\\%c", *p++);
        } else {
            fwrite(p, 1, n, f);
            p += n;
        }
    }
}

void fb_md_put_text(FILE *f, const char *s)
{
    put_bytes(f, s, "\\`[]<>|&", false);
}

/* The longest run of backquotes in s. */
static size_t longest_run(const char *s)
{
    size_t best = 0, run = 0;

    for (; s && *s; s++) {
        run = *s == '`' ? run + 1 : 0;
        best = run > best ? run : best;
    }
    return best;
}

static void put_fence(FILE *f, size_t n)
{
    while (n--)
        fputc('`', f);
}

void fb_md_put_code(FILE *f, const char *s, bool in_table)
{
    size_t fence = longest_run(s) + 1, n = s ? strlen(s) : 0;
    bool pad = n && (s[0] == '`' || s[n - 1] == '`' || (s[0] == ' ' && s[n - 1] == ' '));

    if (!n) { /* `` is no span: an empty one is a space */
        fputs("` `", f);
        return;
    }
    put_fence(f, fence);
    if (pad)
        fputc(' ', f);
    put_bytes(f, s, NULL, in_table);
    if (pad)
        fputc(' ', f);
    put_fence(f, fence);
}

void fb_md_put_code_block(FILE *f, const char *s)
{
    size_t fence = longest_run(s) + 1;

    fence = fence < 3 ? 3 : fence;
    put_fence(f, fence);
    fputc('\n', f);
    put_bytes(f, s, NULL, false);
    fputc('\n', f);
    put_fence(f, fence);
    fputc('\n', f);
}

void fb_md_put_link(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
            strchr("-._~/", *p))
            fputc(*p, f);
        else
            fprintf(f, "%%%02X", *p);
    }
}
