/* Random hostile strings for the escaping tests (test_text_escape.c, test_script_writers.c):
 * a fixed-seed generator, so every run tries the same strings, built from the pieces that break
 * gnuplot scripts, Markdown tables and XML: quotes, backslashes, line ends, control bytes,
 * backquotes, gnuplot macros and system(), pipes, markup, UTF-8, C1 controls and malformed
 * UTF-8. */
#ifndef FB_TEST_FUZZ_TEXT_H
#define FB_TEST_FUZZ_TEXT_H

#include <stdint.h>
#include <string.h>

static uint64_t fuzz_state = 0x9e3779b97f4a7c15ull;

static uint32_t fuzz_next(void)
{
    fuzz_state ^= fuzz_state << 13;
    fuzz_state ^= fuzz_state >> 7;
    fuzz_state ^= fuzz_state << 17;
    return (uint32_t)(fuzz_state >> 16);
}

/* Fills buf (len bytes, len > 1) with a random NUL-free string of pieces. */
static void fuzz_string(char *buf, size_t len)
{
    static const char *const piece[] = {
        "'", "\"", "\\", "\n", "\r", "\t", "\x01", "\x1b", "\x7f", "system(\"touch pwned\")",
        "|", "`", "```", "@draw", "$x", "#", "\xc3\xa9", "\xe6\x97\xa5", "\xff", "\xed\xa0\x80",
        "\xef\xbf\xbe", "\xc2\x9b", "\x9b", "<", ">", "&", "]]>", "[a](b)", "*", "_", "a", " ",
        "\\\n", ".", "''",
        "x\nsystem(\"\"touch pwned\"\")\n#", "`touch pwned`", "\n!touch pwned\n", "<br>", "&#10;"};
    size_t used = 0, n = 1 + fuzz_next() % 8;

    buf[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *p = piece[fuzz_next() % (sizeof piece / sizeof piece[0])];
        size_t k = strlen(p);
        if (used + k + 1 > len)
            break;
        memcpy(buf + used, p, k + 1);
        used += k;
    }
    if (!used && len > 1) { /* an empty string is a case too, but keep one byte half the time */
        if (fuzz_next() & 1)
            strcpy(buf, "'");
    }
}

#endif
