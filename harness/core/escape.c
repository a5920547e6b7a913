/* Escaping text for messages (escape.h). */
#include "escape.h"

#include <stdio.h>
#include <string.h>

char *fb_escape(const char *s, size_t n, size_t max, char *dst, size_t dstlen)
{
    size_t used = 0, i;

    if (!dstlen)
        return dst;
    for (i = 0; i < n && (!max || i < max); i++) {
        unsigned char c = (unsigned char)s[i];
        char one[5];
        size_t k;

        if (c == '\\')
            k = (size_t)snprintf(one, sizeof one, "\\\\");
        else if (c < 0x20 || c >= 0x7f)
            k = (size_t)snprintf(one, sizeof one, "\\x%02x", c);
        else
            k = (size_t)snprintf(one, sizeof one, "%c", c);
        if (used + k + 4 > dstlen) /* room kept for "..." and the NUL */
            break;
        memcpy(dst + used, one, k);
        used += k;
    }
    if (i < n && used + 4 <= dstlen) {
        memcpy(dst + used, "...", 3);
        used += 3;
    }
    dst[used < dstlen ? used : dstlen - 1] = '\0';
    return dst;
}

char *fb_escape_str(const char *s, size_t max, char *dst, size_t dstlen)
{
    return fb_escape(s, strlen(s), max, dst, dstlen);
}

size_t fb_escape_control_at(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i;

    for (i = 0; u[i]; i++) {
        if (fb_escape_is_control(u[i]))
            return i;
        if (u[i] == 0xc2 && u[i + 1] >= 0x80 && u[i + 1] <= 0x9f)
            return i;
        /* a byte 0x80-0x9f that no lead byte (0xc2-0xf4) or earlier continuation byte explains */
        if (fb_escape_ends_c1(i == 0 ? 0 : u[i - 1], u[i]) && (i == 0 || u[i - 1] != 0xc2))
            return i;
    }
    return i;
}

size_t fb_escape_control_but_tab(const char *s)
{
    size_t i = 0;

    for (;;) {
        i += fb_escape_control_at(s + i);
        if (s[i] != '\t')
            return i;
        i++;
    }
}

int fb_utf8_len(const char *s, unsigned *cp_out)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned cp;
    int n;

    if (p[0] < 0x80) {
        cp = p[0];
        n = 1;
    } else {
        if (p[0] >= 0xc2 && p[0] <= 0xdf)
            n = 2, cp = p[0] & 0x1f;
        else if (p[0] >= 0xe0 && p[0] <= 0xef)
            n = 3, cp = p[0] & 0x0f;
        else if (p[0] >= 0xf0 && p[0] <= 0xf4)
            n = 4, cp = p[0] & 0x07;
        else
            return 0;
        for (int i = 1; i < n; i++) {
            if ((p[i] & 0xc0) != 0x80) /* a NUL ends the string here too */
                return 0;
            cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
    }
    if (cp_out)
        *cp_out = cp;
    return n;
}

size_t fb_utf8_invalid_at(const char *s)
{
    size_t i = 0;
    int n;

    while (s[i] && (n = fb_utf8_len(s + i, NULL)) > 0)
        i += (size_t)n;
    return i;
}
