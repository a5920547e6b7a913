/* XML element text and attribute values (xml_text.h). */
#include "xml_text.h"

#include <stdbool.h>

/* The length of the well-formed UTF-8 sequence at p that is an XML character (1 to 4), or 0:
 * RFC 3629's shortest forms only (no surrogates, nothing above U+10FFFF), without U+FFFE and
 * U+FFFF. Control characters are the caller's. */
static int utf8_len(const unsigned char *p)
{
    unsigned cp;
    int n;

    if (p[0] < 0x80)
        return 1;
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
        (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff)
        return 0;
    return n;
}

static void put_xml(FILE *f, const char *s, bool attr)
{
    const unsigned char *p = (const unsigned char *)s;

    while (p && *p) {
        int n = utf8_len(p);
        unsigned char c = *p;

        if (c == '&')
            fputs("&amp;", f);
        else if (c == '<')
            fputs("&lt;", f);
        else if (c == '>')
            fputs("&gt;", f);
        else if (attr && c == '"')
            fputs("&quot;", f);
        else if (attr && c == '\'')
            fputs("&apos;", f);
        else if (c == '\r' || (attr && (c == '\n' || c == '\t')))
            fprintf(f, "&#%d;", c);
        else if (c == '\n' || c == '\t' || (c >= 0x20 && c != 0x7f && n))
            fwrite(p, 1, (size_t)(n ? n : 1), f);
        else
            fprintf(f, "\\x%02x", c);
        p += n > 1 ? n : 1;
    }
}

void fb_xml_put_text(FILE *f, const char *s) { put_xml(f, s, false); }

void fb_xml_put_attr(FILE *f, const char *s) { put_xml(f, s, true); }
