/* XML element text and attribute values (xml_text.h). */
#include "xml_text.h"

#include "escape.h"

#include <stdbool.h>

/* The length of the well-formed UTF-8 sequence at p that is an XML character (1 to 4), or 0:
 * fb_utf8_len's, without U+FFFE and U+FFFF. Control characters are the caller's. */
static int utf8_len(const unsigned char *p)
{
    unsigned cp;
    int n = fb_utf8_len((const char *)p, &cp);

    return n && cp != 0xfffe && cp != 0xffff ? n : 0;
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
