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
