/* Markdown text, code spans, code blocks and link destinations (md_text.h). */
#include "md_text.h"

#include <string.h>

static bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

static void put_hex(FILE *f, unsigned char c) { fprintf(f, "\\x%02x", c); }

void fb_md_put_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if (is_control(*p))
            put_hex(f, *p);
        else if (strchr("\\`[]<>|&", *p))
            fprintf(f, "\\%c", *p);
        else
            fputc(*p, f);
    }
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
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (is_control(c))
            put_hex(f, c);
        else if (c == '|' && in_table)
            fputs("\\|", f);
        else
            fputc(c, f);
    }
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
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if (is_control(*p))
            put_hex(f, *p);
        else
            fputc(*p, f);
    }
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
